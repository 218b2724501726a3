; fir8_taps.s -- the 8-tap FIR filter of fir8_lc0.s with its taps read from memory in the
; loop body: y[i] = h0*x[i] + ... + h7*x[i+7] for i < N, where each iteration loads tap k
; with `V.LWI [s4 + (k << 2)]` (a uniform load: one element broadcast to every lane), as a
; compiler emits when it cannot prove the taps apart from y, then V.FMUL.S for tap 0 and
; seven fused V.FMA.S in tap order. The same taps as fir8_lc0.s (0.03125, -0.0625, 0.125,
; 0.40625, 0.40625, 0.125, -0.0625, 0.03125), stored to H by the kernel before the loop.
;
; Bench kernel. The harness rewrites the `.equ N` line and fills x (N + 7 floats, finite)
; host-side; the output is fir8_lc0.s's, bit for bit. One element = one y.

        .equ    N, 1024                 ; outputs (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    H, 0x20000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x1000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC                 ; x
        S.LI    s2, DST                 ; y
        S.LI    s3, N
        S.LI    s4, H                   ; h
        S.LI    s10, 0x3d000000         ; h0 = 0.03125f
        S.LI    s11, 0xbd800000         ; h1 = -0.0625f
        S.LI    s12, 0x3e000000         ; h2 = 0.125f
        S.LI    s13, 0x3ed00000         ; h3 = 0.40625f
        V.SWI   s10, [s4 + (0 << 2)]
        V.SWI   s11, [s4 + (1 << 2)]
        V.SWI   s12, [s4 + (2 << 2)]
        V.SWI   s13, [s4 + (3 << 2)]
        V.SWI   s13, [s4 + (4 << 2)]    ; h4 = h3
        V.SWI   s12, [s4 + (5 << 2)]    ; h5 = h2
        V.SWI   s11, [s4 + (6 << 2)]    ; h6 = h1
        V.SWI   s10, [s4 + (7 << 2)]    ; h7 = h0
        LOOP    s3
        V.LWI   [s4 + (0 << 2)], ->v10
        V.LW    [s1, lc0<<2, 0], ->v0
        V.FMUL.S v8, v0, v10
        V.LWI   [s4 + (1 << 2)], ->v11
        V.LW    [s1, lc0<<2, 4], ->v1
        V.FMA.S v8, v1, v11
        V.LWI   [s4 + (2 << 2)], ->v12
        V.LW    [s1, lc0<<2, 8], ->v2
        V.FMA.S v8, v2, v12
        V.LWI   [s4 + (3 << 2)], ->v13
        V.LW    [s1, lc0<<2, 12], ->v3
        V.FMA.S v8, v3, v13
        V.LWI   [s4 + (4 << 2)], ->v14
        V.LW    [s1, lc0<<2, 16], ->v4
        V.FMA.S v8, v4, v14
        V.LWI   [s4 + (5 << 2)], ->v15
        V.LW    [s1, lc0<<2, 20], ->v5
        V.FMA.S v8, v5, v15
        V.LWI   [s4 + (6 << 2)], ->v16
        V.LW    [s1, lc0<<2, 24], ->v6
        V.FMA.S v8, v6, v16
        V.LWI   [s4 + (7 << 2)], ->v17
        V.LW    [s1, lc0<<2, 28], ->v7
        V.FMA.S v8, v7, v17
        V.SW    v8, [s2, lc0<<2, 0]
        ENDLOOP
        HALT

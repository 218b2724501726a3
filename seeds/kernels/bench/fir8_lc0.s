; fir8_lc0.s -- 8-tap FIR filter in f32, contiguous (lc0) form:
;   y[i] = h0*x[i] + h1*x[i+1] + ... + h7*x[i+7] for i < N,
; as V.FMUL.S for tap 0 then seven fused V.FMA.S in tap order (acc = x[i]*h0;
; acc = fma(x[i+k], hk, acc)). Taps h = 0.03125, -0.0625, 0.125, 0.40625, 0.40625, 0.125,
; -0.0625, 0.03125 (f32 bit patterns in s10..s17, broadcast operands).
;
; Bench kernel. The harness rewrites the `.equ N` line and fills x (N + 7 floats, finite)
; host-side. Tap k is a contiguous load with byte offset 4k. One element = one y.
; fir8_vaddr.s is the same kernel with vector addresses.

        .equ    N, 1024                 ; outputs (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC                 ; x
        S.LI    s2, DST                 ; y
        S.LI    s3, N
        S.LI    s10, 0x3d000000         ; h0 = 0.03125f
        S.LI    s11, 0xbd800000         ; h1 = -0.0625f
        S.LI    s12, 0x3e000000         ; h2 = 0.125f
        S.LI    s13, 0x3ed00000         ; h3 = 0.40625f
        S.LI    s14, 0x3ed00000         ; h4 = 0.40625f
        S.LI    s15, 0x3e000000         ; h5 = 0.125f
        S.LI    s16, 0xbd800000         ; h6 = -0.0625f
        S.LI    s17, 0x3d000000         ; h7 = 0.03125f
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v0
        V.FMUL.S v8, v0, s10
        V.LW    [s1, lc0<<2, 4], ->v1
        V.FMA.S v8, v1, s11
        V.LW    [s1, lc0<<2, 8], ->v2
        V.FMA.S v8, v2, s12
        V.LW    [s1, lc0<<2, 12], ->v3
        V.FMA.S v8, v3, s13
        V.LW    [s1, lc0<<2, 16], ->v4
        V.FMA.S v8, v4, s14
        V.LW    [s1, lc0<<2, 20], ->v5
        V.FMA.S v8, v5, s15
        V.LW    [s1, lc0<<2, 24], ->v6
        V.FMA.S v8, v6, s16
        V.LW    [s1, lc0<<2, 28], ->v7
        V.FMA.S v8, v7, s17
        V.SW    v8, [s2, lc0<<2, 0]
        ENDLOOP
        HALT

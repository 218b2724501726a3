; fir8_bump.s -- 8-tap FIR filter in f32, strength-reduced form:
;   y[i] = h0*x[i] + h1*x[i+1] + ... + h7*x[i+7] for i < N,
; as V.FMUL.S for tap 0 then seven fused V.FMA.S in tap order, the same arithmetic and taps
; as fir8_lc0.s (h in s10..s17).
;
; Bench kernel. Same data and output as fir8_lc0.s; only the addressing differs: a compiler
; that strength-reduces the loop keeps pointers to x and y in s1 and s2 and bumps them by
; VL * 4 bytes every iteration, with the lanes' byte offsets built once before the loop
; (`V.LANEID; V.SHL 2`): tap k is `V.LWI.U [v9 + 4k]` off `v9 = offsets + s1`, the store
; goes through `[s2 + offsets]`. One element = one y.

        .equ    N, 1024                 ; outputs (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC                 ; &x[0]
        S.LI    s2, DST                 ; &y[0]
        S.LI    s3, N
        S.VL    s4
        S.SHL   s4, s4, 2               ; bytes per group of VL elements
        S.LI    s10, 0x3d000000         ; h0 = 0.03125f
        S.LI    s11, 0xbd800000         ; h1 = -0.0625f
        S.LI    s12, 0x3e000000         ; h2 = 0.125f
        S.LI    s13, 0x3ed00000         ; h3 = 0.40625f
        S.LI    s14, 0x3ed00000         ; h4 = 0.40625f
        S.LI    s15, 0x3e000000         ; h5 = 0.125f
        S.LI    s16, 0xbd800000         ; h6 = -0.0625f
        S.LI    s17, 0x3d000000         ; h7 = 0.03125f
        V.LANEID v20
        V.SHL   v20, v20, 2             ; byte offset of each lane
        LOOP    s3
        V.ADD   v9, v20, s1             ; &x[i] per lane
        V.LWI.U [v9 + 0], ->v0
        V.FMUL.S v8, v0, s10
        V.LWI.U [v9 + 4], ->v1
        V.FMA.S v8, v1, s11
        V.LWI.U [v9 + 8], ->v2
        V.FMA.S v8, v2, s12
        V.LWI.U [v9 + 12], ->v3
        V.FMA.S v8, v3, s13
        V.LWI.U [v9 + 16], ->v4
        V.FMA.S v8, v4, s14
        V.LWI.U [v9 + 20], ->v5
        V.FMA.S v8, v5, s15
        V.LWI.U [v9 + 24], ->v6
        V.FMA.S v8, v6, s16
        V.LWI.U [v9 + 28], ->v7
        V.FMA.S v8, v7, s17
        V.SW.U  v8, [s2 + v20]
        S.ADD   s1, s1, s4
        S.ADD   s2, s2, s4
        ENDLOOP
        HALT

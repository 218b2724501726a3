; poly_g.s -- a compute-bound launch kernel: group g evaluates y = 0.5 * (x + 1)^24 on its
; own slice of PER f32 elements, [g*PER, (g+1)*PER), as 24 fused steps acc = x*acc + acc
; (V.FMA.S), reading x from SRC and writing y to DST: race-free. The harness rewrites PER.

        .equ    PER, 1024               ; elements per group (rewritten by the harness)
        .equ    PERB, 4096              ; bytes per group: 4 * PER (rewritten likewise)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.GID   s5
        S.MUL   s5, s5, PERB
        S.LI    s1, SRC
        S.ADD   s1, s1, s5
        S.LI    s2, DST
        S.ADD   s2, s2, s5
        S.LI    s4, 0x3f000000          ; 0.5f as bits
        S.LI    s3, PER
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1   ; x
        V.MOV   v2, s4                  ; acc = 0.5
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.FMA.S v2, v1, v2
        V.SW    v2, [s2, lc0<<2, 0]
        ENDLOOP
        HALT

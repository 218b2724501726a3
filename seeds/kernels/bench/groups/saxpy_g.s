; saxpy_g.s -- the launch version of saxpy32: group g computes y = 1.5*x + y (unfused, f32)
; on its own slice of PER elements, [g*PER, (g+1)*PER): race-free. The harness rewrites PER
; and launches G groups over x at SRC and y at DST.

        .equ    PER, 1024               ; elements per group (rewritten by the harness)
        .equ    PERB, 4096              ; bytes per group: 4 * PER (rewritten likewise)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.GID   s5
        S.MUL   s5, s5, PERB        ; this group's byte offset
        S.LI    s1, SRC
        S.ADD   s1, s1, s5
        S.LI    s2, DST
        S.ADD   s2, s2, s5
        S.LI    s4, 0x3fc00000          ; a = 1.5f as bits
        S.LI    s3, PER
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1   ; x
        V.LW    [s2, lc0<<2, 0], ->v2   ; y
        V.FMUL.S v1, v1, s4             ; a * x (rounded)
        V.FADD.S v2, v1, v2             ; + y (rounded)
        V.SW    v2, [s2, lc0<<2, 0]
        ENDLOOP
        HALT

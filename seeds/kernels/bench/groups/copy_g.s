; copy_g.s -- the launch version of copy32: group g copies its own slice of PER words from
; SRC to DST, [g*PER, (g+1)*PER): race-free. The harness rewrites PER.

        .equ    PER, 1024               ; words per group (rewritten by the harness)
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
        S.LI    s3, PER
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1
        V.SW    v1, [s2, lc0<<2, 0]
        ENDLOOP
        HALT

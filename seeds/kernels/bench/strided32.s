; strided32.s -- dst[i] = src[16 * i] for i < N: one word every 64 bytes.
;
; Bench kernel. lc0 is the register offset of a register-offset load with shamt 6, so lane
; i reads src + ((LC0BASE + i) << 6). The source spans 64 * N bytes; one element = one word.

        .equ    N, 256                  ; element count (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC
        S.LI    s4, DST
        S.LI    s3, N
        LOOP    s3
        V.LW    [s1 + (lc0 << 6)], ->v1
        V.SW    v1, [s4, lc0<<2, 0]
        ENDLOOP
        HALT

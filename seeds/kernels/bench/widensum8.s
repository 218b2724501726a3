; widensum8.s -- int8 -> int64 sign-extending sum: s5 = sum of src[i] as i64, i < N.
;
; Bench kernel. V.LB (contiguous) sign-extends each byte into its 64-bit lane, V.ADD
; accumulates per lane, V.REDSUM folds the lanes. One element = one byte.

        .equ    N, 4096                 ; element count (rewritten by the harness)
        .equ    SRC, 0x10000000
        .mem    0x10000000, 0x4400000, rw

        .text
        S.LI    s1, SRC
        S.LI    s3, N
        V.MOV   v2, 0                   ; accumulator
        LOOP    s3
        V.LB    [s1, lc0, 0], ->v1
        V.ADD   v2, v2, v1
        ENDLOOP
        V.REDSUM s5, v2
        HALT

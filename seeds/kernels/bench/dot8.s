; dot8.s -- int8 dot product: s5 = sum of a[i] * b[i] for i < N, the bytes sign-extended,
; the sum exact (64-bit lanes).
;
; Bench kernel. The harness rewrites the `.equ N` line and fills a and b with random bytes
; host-side. Contiguous V.LB loads sign-extend each byte into its lane; V.MUL and V.ADD
; accumulate per lane and V.REDSUM folds the lanes. One element = one pair of bytes.

        .equ    N, 4096                 ; element count (rewritten by the harness)
        .equ    A, 0x10000000
        .equ    B, 0x20130440
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw

        .text
        S.LI    s1, A
        S.LI    s2, B
        S.LI    s3, N
        V.MOV   v3, 0                   ; accumulator
        LOOP    s3
        V.LB    [s1, lc0, 0], ->v1
        V.LB    [s2, lc0, 0], ->v2
        V.MUL   v1, v1, v2
        V.ADD   v3, v3, v1
        ENDLOOP
        V.REDSUM s5, v3
        HALT

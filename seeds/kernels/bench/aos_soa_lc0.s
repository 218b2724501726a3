; aos_soa_lc0.s -- AoS -> SoA of 4-field structs: for i < N, with src[i] = {a, b, c, d}
; (four 32-bit words, 16 bytes): A[i] = a, B[i] = b, C[i] = c, D[i] = d, where the four
; arrays follow each other at dst (A at dst, B at dst + 4N, C at dst + 8N, D at dst + 12N).
;
; Bench kernel. The harness rewrites the `.equ N` line and fills src host-side. Field f is
; a strided load with lc0 as the register offset, `V.LW [s(f) + (lc0 << 4)]` off the base
; src + 4f; the four stores are contiguous with a scalar offset. One element = one struct.
; aos_soa_vaddr.s is the same kernel with vector addresses.

        .equ    N, 1024                 ; structs (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC                 ; &src[0].a
        S.ADD   s5, s1, 4               ; &src[0].b
        S.ADD   s6, s1, 8               ; &src[0].c
        S.ADD   s7, s1, 12              ; &src[0].d
        S.LI    s2, DST
        S.LI    s3, N
        S.SHL   s10, s3, 2              ; offset of B: 4N
        S.ADD   s11, s10, s10           ; C: 8N
        S.ADD   s12, s11, s10           ; D: 12N
        LOOP    s3
        V.LW    [s1 + (lc0 << 4)], ->v1
        V.LW    [s5 + (lc0 << 4)], ->v2
        V.LW    [s6 + (lc0 << 4)], ->v3
        V.LW    [s7 + (lc0 << 4)], ->v4
        V.SW    v1, [s2, lc0<<2, 0]
        V.SW    v2, [s2, lc0<<2, s10]
        V.SW    v3, [s2, lc0<<2, s11]
        V.SW    v4, [s2, lc0<<2, s12]
        ENDLOOP
        HALT

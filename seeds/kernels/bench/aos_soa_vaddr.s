; aos_soa_vaddr.s -- AoS -> SoA of 4-field structs: for i < N, with src[i] = {a, b, c, d}
; (four 32-bit words, 16 bytes): A[i] = a, B[i] = b, C[i] = c, D[i] = d, where the four
; arrays follow each other at dst (A at dst, B at dst + 4N, C at dst + 8N, D at dst + 12N).
;
; Bench kernel. Same data and output as aos_soa_lc0.s; only the loads differ: each lane's
; struct address is built from V.LC0 (`V.LC0; V.SHL 4; V.ADD src`) and field f is the
; unscaled-immediate load `V.LWI.U [v5 + 4f]`. The four stores stay contiguous with a scalar
; offset. One element = one struct.

        .equ    N, 1024                 ; structs (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC
        S.LI    s2, DST
        S.LI    s3, N
        S.SHL   s10, s3, 2              ; offset of B: 4N
        S.ADD   s11, s10, s10           ; C: 8N
        S.ADD   s12, s11, s10           ; D: 12N
        LOOP    s3
        V.LC0   v5
        V.SHL   v5, v5, 4
        V.ADD   v5, v5, s1              ; &src[i] per lane
        V.LWI.U [v5 + 0], ->v1
        V.LWI.U [v5 + 4], ->v2
        V.LWI.U [v5 + 8], ->v3
        V.LWI.U [v5 + 12], ->v4
        V.SW    v1, [s2, lc0<<2, 0]
        V.SW    v2, [s2, lc0<<2, s10]
        V.SW    v3, [s2, lc0<<2, s11]
        V.SW    v4, [s2, lc0<<2, s12]
        ENDLOOP
        HALT

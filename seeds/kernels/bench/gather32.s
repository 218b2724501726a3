; gather32.s -- dst[i] = table[idx[i]] for i < N, through a permutation.
;
; Bench kernel. The harness fills idx with the permutation i * K mod N (K odd, coprime to
; N) and table with data. The gather is a register-offset load: loads never add the width
; shift, so the element scaling is written as shamt 2. One element = one gathered word.

        .equ    N, 1024                 ; element count (rewritten by the harness)
        .equ    TABLE, 0x10000000
        .equ    IDX, 0x20130440
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, IDX
        S.LI    s2, TABLE
        S.LI    s4, DST
        S.LI    s3, N
        LOOP    s3
        V.LWU   [s1, lc0<<2, 0], ->v2   ; idx[i]
        V.LW    [s2 + (v2 << 2)], ->v3  ; table[idx[i]]
        V.SW    v3, [s4, lc0<<2, 0]
        ENDLOOP
        HALT

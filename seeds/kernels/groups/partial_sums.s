; partial_sums.s -- 8 groups each sum their own 64-word slice of a 512-word array and
; write the sum to out[gid]; group g's slice holds the words 64g+1 .. 64g+64, so its sum is
; 64*64g + 64*65/2 = 4096g + 2080. Every group reads and writes only its own bytes: race-free.
;
; expect status halted
; expect group 0
; expect groups 8 0 0
; expect instructions 224
; expect s5 0x820
; expect s7 0x8
; expect mem 0x11000 20080000000000002018000000000000202800000000000020380000000000002048000000000000205800000000000020680000000000002078000000000000

        .groups 8
        .mem    0x10000, 0x2000, rw
        .data   0x10000
xs:                                     ; 512 words, filled by the groups themselves
        .equ    N, 64
        .text
        S.GID   s1                      ; g
        S.NGROUPS s7                    ; G
        S.LI    s2, xs
        S.SHL   s3, s1, 8               ; g * 64 words * 4 bytes
        S.ADD   s2, s2, s3              ; this group's slice
        S.LI    s4, N
        S.SHL   s6, s1, 6               ; 64g
        LOOP    s4
        V.LC0   v1
        V.ADD   v1, v1, s6
        V.ADD   v1, v1, 1               ; 64g + i + 1
        V.SW    v1, [s2, lc0<<2, 0]
        V.LW    [s2, lc0<<2, 0], ->v2
        V.ADD   v3, v3, v2
        ENDLOOP
        V.REDSUM s5, v3
        S.LI    s8, 0x11000
        S.SHL   s9, s1, 3
        S.ADD   s8, s8, s9
        V.SDI   s5, [s8]                ; every lane stores the same 8 bytes
        HALT

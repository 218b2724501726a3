; race_contiguous.s -- a contiguous read that races with an earlier group's contiguous write
; (the race checker's one-range path). Group 0 stores its lane ids as the words
; 0x10100..0x1010f; group 1 loads the words 0x10108..0x10117: lane 0 (0x10108) is the lowest
; racing lane and 0x10108 its lowest racing byte. The data_race trap ends the launch (group 2
; never runs) and names group 0's store as "other". Retired: 7 (group 0) + 5 (group 1, the
; load does not retire) = 12.
;
; flags --check-races
; expect status trapped
; expect group 1
; expect groups 1 1 0
; expect instructions 12
; expect trap data_race pc 0x38 lane 0 ea 0x10108 space memory access read
; expect other group 0 pc 0x28 access write
; expect mem 0x10100 00000000010000000200000003000000

        .groups 3
        .vl     4
        .mem    0x10000, 0x1000, rw

        .text
        S.GID   s1                      ; 0x00
        S.LI    s2, 0x10000             ; 0x08
        V.LANEID v1                     ; 0x18
        BNE     s1, 0, g1               ; 0x20
        V.SW    v1, [s2, lc0<<2, 0x100] ; 0x28: group 0 writes 0x10100..0x1010f
g1:
        BNE     s1, 1, done             ; 0x30
        V.LW    [s2, lc0<<2, 0x108], ->v2 ; 0x38: races at lane 0
done:
        HALT                            ; 0x40

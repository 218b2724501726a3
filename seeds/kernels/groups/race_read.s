; race_read.s -- a read that races with an earlier group's write. Group 1 writes the word
; at 0x10010. Group 2 gathers words at 0x10008 + 3i (lane i, unaligned): lane 2 reads
; 0x1000e..0x10011, the lowest racing lane, and 0x10010 is its lowest racing byte. The
; data_race trap ends the launch (group 3 never runs) and names group 1's store as "other".
; Retired: 5 (group 0) + 7 (group 1) + 7 (group 2, the load does not retire) = 19.
;
; flags --check-races
; expect status trapped
; expect group 2
; expect groups 2 1 0
; expect instructions 19
; expect trap data_race pc 0x60 lane 2 ea 0x10010 space memory access read
; expect other group 1 pc 0x30 access write
; expect mem 0x10010 07000000

        .groups 4
        .mem    0x10000, 0x1000, rw

        .text
        S.GID   s1                      ; 0x00
        S.LI    s2, 0x10000             ; 0x08
        BNE     s1, 1, reader           ; 0x18
        S.LI    s3, 7                   ; 0x20
        V.SWI   s3, [s2 + (4 << 2)]     ; 0x30: group 1 writes 0x10010..0x10013
reader:
        BNE     s1, 2, done             ; 0x38
        V.LANEID v1                     ; 0x40
        V.MUL   v2, v1, 3               ; 0x48
        S.LI    s4, 0x10008             ; 0x50
        V.LW    [s4 + v2], ->v3         ; 0x60: races
done:
        HALT                            ; 0x68

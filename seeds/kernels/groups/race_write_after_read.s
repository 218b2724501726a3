; race_write_after_read.s -- a write that races with an earlier group's read. Group 0 reads
; byte 0x10105 (pc 0x20) and then writes it (pc 0x28): its earliest access to the byte is the
; read. Group 1 touches no memory. Group 2 stores halves at 0x10100 + i (lane i): lane 4
; writes 0x10104..0x10105, the lowest racing lane, and 0x10105 its racing byte. "other" is
; the earliest access by an earlier group: group 0's read. The racing store writes nothing:
; memory keeps group 0's byte (0). Retired: 7 + 5 + 5 = 17.
;
; flags --check-races
; expect status trapped
; expect group 2
; expect groups 2 1 0
; expect instructions 17
; expect trap data_race pc 0x40 lane 4 ea 0x10105 space memory access write
; expect other group 0 pc 0x20 access read
; expect mem 0x10100 0000000000000000

        .groups 3
        .mem    0x10000, 0x1000, rw

        .text
        S.GID   s1                      ; 0x00
        S.LI    s2, 0x10100             ; 0x08
        BNE     s1, 0, g2               ; 0x18
        V.LBUI  [s2 + 5], ->v1          ; 0x20: group 0 reads 0x10105
        V.SBI   s1, [s2 + 5]            ; 0x28: ... then writes it
g2:
        BNE     s1, 2, done             ; 0x30
        V.LANEID v1                     ; 0x38
        V.SH.U  v1, [s2 + v1]           ; 0x40: races
done:
        HALT                            ; 0x48

; race_write_write.s -- a write that races with an earlier group's write, after an
; instruction that would race but traps for another reason. Group 0 writes the word
; 0x10020 (= 0x10000: bytes 00 00 01 00). Group 1 stores words at 0x10020 + 4096i: lane 0
; would race, but lane 1 (0x11020) is unmapped, so the instruction traps page_fault, is not
; an access, and the launch goes on. Group 2 writes the byte 0x10022: a race with group 0's
; write. The data_race trap ends the launch and its group is reported, although group 1
; trapped first; the racing store writes nothing. Retired: 7 + 7 + 5 = 19.
;
; flags --check-races
; expect status trapped
; expect group 2
; expect groups 1 2 0
; expect instructions 19
; expect trap data_race pc 0x58 lane 0 ea 0x10022 space memory access write
; expect other group 0 pc 0x20 access write
; expect s1 0x2
; expect mem 0x10020 00000100

        .groups 4
        .mem    0x10000, 0x1000, rw

        .text
        S.GID   s1                      ; 0x00
        S.LI    s2, 0x10000             ; 0x08
        BNE     s1, 0, g1               ; 0x18
        V.SWI   s2, [s2 + (8 << 2)]     ; 0x20: group 0 writes 0x10020..0x10023
g1:
        BNE     s1, 1, g2               ; 0x28
        V.LANEID v1                     ; 0x30
        V.SHL   v2, v1, 12              ; 0x38
        S.ADD   s3, s2, 0x20            ; 0x40
        V.SW.U  v1, [s3 + v2]           ; 0x48: page_fault in lane 1, not an access
g2:
        BNE     s1, 2, done             ; 0x50
        V.SBI   s1, [s2 + 0x22]         ; 0x58: races with group 0's write
done:
        HALT                            ; 0x60

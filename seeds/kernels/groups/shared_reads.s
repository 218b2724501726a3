; shared_reads.s -- 5 groups read the same table bytes (initial data, written by no group)
; and each writes only its own slot out[g] = 10+20+30+40 + g, then reads it back: reads of
; bytes no group writes never race, nor does a group with itself, so --check-races runs the
; ordinary launch. Per group 14 instructions retire.
;
; flags --check-races
; expect status halted
; expect group 0
; expect groups 5 0 0
; expect instructions 70
; expect s4 0x64
; expect v2[0] 0x64
; expect mem 0x10100 64000000000000006500000000000000660000000000000067000000000000006800000000000000

        .groups 5
        .mem    0x10000, 0x1000, rw
        .data   0x10000
table:  .word   10, 20, 30, 40
        .data   0x10100
out:    .space  40

        .text
        S.GID   s1
        S.LI    s2, table
        S.LI    s3, 4
        LOOP    s3
        V.LW    [s2, lc0<<2, 0], ->v1   ; every group reads the whole table
        ENDLOOP
        V.REDSUM s4, v1                 ; 100
        S.ADD   s4, s4, s1
        S.LI    s5, out
        S.SHL   s6, s1, 3
        S.ADD   s5, s5, s6
        V.SDI   s4, [s5]                ; out[g]
        V.LDI   [s5], ->v2              ; its own write: not a race
        HALT

; group_traps.s -- 6 groups. Group 3 loads from an unmapped page (page_fault, lane 0,
; ea 0x20008); group 5 stores to a read-only page (permission_fault). The others write
; out[g] = 10g and halt. A trap in one group does not stop the others; the reported group is
; the lowest that trapped, 3. Retired: 9 for each of groups 0, 1, 2, 4; 4 for group 3 (the
; load does not retire); 5 for group 5: 45 in all.
;
; expect status trapped
; expect group 3
; expect groups 4 2 0
; expect instructions 45
; expect trap page_fault pc 0x30 lane 0 ea 0x20008 space memory access read
; expect s1 0x3
; expect s3 0x20000
; expect mem 0x10000 00000000000000000a00000000000000140000000000000000000000000000002800000000000000000000000000000000

        .groups 6
        .mem    0x10000, 0x1000, rw
        .mem    0x11000, 0x1000, r

        .text
        S.GID   s1                      ; 0x00
        S.LI    s2, 0x10000             ; 0x08
        BNE     s1, 3, not3             ; 0x18
        S.LI    s3, 0x20000             ; 0x20
        V.LWI   [s3 + (2 << 2)], ->v1   ; 0x30: page_fault
not3:
        BNE     s1, 5, not5             ; 0x38
        S.LI    s3, 0x11000             ; 0x40
        V.SWI   s1, [s3]                ; 0x50: permission_fault
not5:
        S.MUL   s4, s1, 10              ; 0x58
        S.SHL   s5, s1, 3
        S.ADD   s5, s5, s2
        V.SDI   s4, [s5]                ; out[g] = 10g
        HALT

; tile_isolation.s -- 4 groups, each with its own tile laid out from .tiledata and
; .tileprotect. Every group reads tile[0] (.tiledata: 5) and tile[8] (0), records what it
; found in memory (out1[g] at 0x10000, out2[g] at 0x10100), then writes gid+5 to tile[0] and
; gid+1 to tile[8]. Were tiles shared or not reset between groups run by one thread, a later
; group would find another group's values; every group must find 5 and 0. tile[0x40] lies in
; a read-only granule holding 0x77. Reported: group 0 (all halt), whose tile ends as 5, 1.
; Per group 19 instructions retire.
;
; expect status halted
; expect group 0
; expect groups 4 0 0
; expect instructions 76
; expect s5 0x5
; expect s6 0x0
; expect s7 0x77
; expect mem 0x10000 0500000000000000050000000000000005000000000000000500000000000000
; expect mem 0x10100 0000000000000000000000000000000000000000000000000000000000000000
; expect tile 0x0 05000000000000000100000000000000
; expect tile 0x40 7700000000000000

        .groups 4
        .mem    0x10000, 0x1000, rw
        .tilesize 0x1000
        .tileprotect 0x40, 0x40, r
        .tiledata 0
        .dword  5
        .tiledata 0x40
        .dword  0x77

        .text
        S.GID   s1
        S.LI    s2, 0
        V.LDI.local [s2], ->v1                  ; tile[0]
        V.LDI.local [s2 + (1 << 3)], ->v2       ; tile[8]
        S.GETLANE s5, v1, 0
        S.GETLANE s6, v2, 0
        V.ADD   v1, v1, s1
        V.ADD   v2, v2, s1
        V.ADD   v2, v2, 1
        V.SDI.local v1, [s2]
        V.SDI.local v2, [s2 + (1 << 3)]
        V.LDI.local [s2 + (8 << 3)], ->v3       ; tile[0x40], read-only granule
        S.GETLANE s7, v3, 0
        S.LI    s3, 0x10000
        S.SHL   s4, s1, 3
        S.ADD   s3, s3, s4
        V.SDI   s5, [s3]                        ; out1[g]: tile[0] as the group found it
        V.SDI   s6, [s3 + (32 << 3)]            ; out2[g]: tile[8] as the group found it
        HALT

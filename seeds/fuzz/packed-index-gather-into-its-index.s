; lanejit fuzz reproducer (seed 801, the index stream of the loop snippets; data cut to two rows)
; caught: a gather into its own index register, the index kept packed for the packed-index fast path: translating the fast path marked the register wide before the slow path was translated, so the fault's exit wrote back its stale wide value instead of the loaded indices (fixed: such a gather materialises its index first)
; fuzz-config: --vl 4 --max-instructions 7
.vl 4
.tilesize 1792
.mem 0x10000, 0x3000, rw
.mem 0x14000, 0x2000, rw
.mem 0x1000000, 0x400000, rw
.data 0x13b800c
.byte 0x08, 0x00, 0x00, 0x00, 0x2f, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x25, 0x00, 0x00, 0x00
.byte 0x1b, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0xf8, 0xff, 0xff, 0xff, 0x21, 0x00, 0x00, 0x00
.text
    S.LI s17, 0x13b8004
    S.LI s19, 0x4
    LOOP s19
    V.LC0 v19
    V.LWU [s17 + (v19 << 2)], ->v7
    V.LW [s0 + v7], ->v7
    ENDLOOP

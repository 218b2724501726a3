; lanejit fuzz reproducer (seed 300, shrunk by hand: tile data cut to one row)
; caught: the partial-mask path of a loop was translated with the lazy-NaN state the full copy's translation left behind, so its exit canonicalised v9 (an f64 result from before the loop) as f32 and cleared its upper half
; fuzz-config: --vl 2 --max-instructions 7
.vl 2
.tilesize 3072
.mem 0x10000, 0x6000, rw
.tiledata 0x0
.byte 0x68, 0x7f, 0x1e, 0x43, 0xe1, 0xf8, 0x96, 0xbc, 0x5a, 0xaa, 0x48, 0x6e, 0x0c, 0x23, 0xc1, 0xe7
.text
    V.LD.local [s0, lc0<<3, 0], ->v11
    V.FMA.D v9, v11, v11
    S.LI s19, 0x1
    LOOP s19
    V.SH v0, [s0, lc0<<1, 0]
    V.FMA.S v9, v0, v0
    ENDLOOP

; scatter.s -- out[idx[i]] = src[i] through a permutation (64-bit elements).
;
; N = 30. Register-offset stores WITHOUT .U add the width shift to shamt:
;   V.SD   v3, [s4 + (v2 << 3)]        shamt 0, total shift 3 -> out1[idx[i]]
;   V.SD.U v3, [s5 + (v2 << 3)]        .U: shamt 3 is the whole shift -> out2 (same bytes)
;   V.SD   v3, [s6 + (v2 << (3 + 1))]  shamt 1 on top of the width: stride 16 -> out3[2*idx[i]]
; The odd dwords of out3 stay zero.
;
; expect status halted
; expect mem 0x20000 416a14bf26f236e4982171d7d32b5955989acbd7213a6b9cc7efce4732d588564fa8d1f7b3aa3d8de3d5c847ac75ca2481ff87679cfaf297e2bd5cc325cf776e67e5c4fd5e750cb96f6c7c0fc5d02668d7151e89243d3da6043ccf3facf11c1f692aeac61b235b45de121dfa1387c1c989f685cbad9d9488af9ef0bdd2409e0d9bc38836051c3d1fb4263c4bce8ba388d98166db66789d86df0202a54eeaae5943a24c26cf56c1414bb424d85373a64ccd779fb316646578e32e1905fb8acb4b31e7c9cbc8db8f4af40bce6143a0b94ca5ad6ac5885adbe326ffc7eedb53e5745487cbb81f51651935658af5f200c5d1
; expect mem 0x20100 416a14bf26f236e4982171d7d32b5955989acbd7213a6b9cc7efce4732d588564fa8d1f7b3aa3d8de3d5c847ac75ca2481ff87679cfaf297e2bd5cc325cf776e67e5c4fd5e750cb96f6c7c0fc5d02668d7151e89243d3da6043ccf3facf11c1f692aeac61b235b45de121dfa1387c1c989f685cbad9d9488af9ef0bdd2409e0d9bc38836051c3d1fb4263c4bce8ba388d98166db66789d86df0202a54eeaae5943a24c26cf56c1414bb424d85373a64ccd779fb316646578e32e1905fb8acb4b31e7c9cbc8db8f4af40bce6143a0b94ca5ad6ac5885adbe326ffc7eedb53e5745487cbb81f51651935658af5f200c5d1
; expect mem 0x20200 416a14bf26f236e40000000000000000982171d7d32b59550000000000000000989acbd7213a6b9c0000000000000000c7efce4732d5885600000000000000004fa8d1f7b3aa3d8d0000000000000000e3d5c847ac75ca24000000000000000081ff87679cfaf2970000000000000000e2bd5cc325cf776e000000000000000067e5c4fd5e750cb900000000000000006f6c7c0fc5d026680000000000000000d7151e89243d3da60000000000000000043ccf3facf11c1f0000000000000000692aeac61b235b450000000000000000de121dfa1387c1c9000000000000000089f685cbad9d94880000000000000000
; expect mem 0x202f0 af9ef0bdd2409e0d00000000000000009bc38836051c3d1f0000000000000000b4263c4bce8ba3880000000000000000d98166db66789d860000000000000000df0202a54eeaae59000000000000000043a24c26cf56c14100000000000000004bb424d85373a64c0000000000000000cd779fb3166465780000000000000000e32e1905fb8acb4b000000000000000031e7c9cbc8db8f4a0000000000000000f40bce6143a0b94c0000000000000000a5ad6ac5885adbe3000000000000000026ffc7eedb53e57400000000000000005487cbb81f516519000000000000000035658af5f200c5d10000000000000000

        .mem    0x10000, 0x1000, r
        .mem    0x20000, 0x1000, rw

        .data   0x10000
idx:
        .word  20, 21, 3, 22, 17, 14, 19, 9, 29, 2
        .word  6, 10, 28, 0, 1, 4, 27, 11, 23, 5
        .word  16, 7, 26, 13, 18, 12, 8, 15, 25, 24
        .align  8
src:
        .dword 0x41c156cf264ca243, 0x4ca67353d824b44b, 0x5688d53247ceefc7
        .dword 0x78656416b39f77cd, 0x88a38bce4b3c26b4, 0x88949dadcb85f689
        .dword 0x59aeea4ea50202df, 0x6826d0c50f7c6c6f, 0xd1c500f2f58a6535
        .dword 0x9c6b3a21d7cb9a98, 0x97f2fa9c6787ff81, 0xa63d3d24891e15d7
        .dword 0x1965511fb8cb8754, 0xe436f226bf146a41, 0x55592bd3d7712198
        .dword 0x8d3daab3f7d1a84f, 0x74e553dbeec7ff26, 0x1f1cf1ac3fcf3c04
        .dword 0x4bcb8afb05192ee3, 0x24ca75ac47c8d5e3, 0x1f3d1c053688c39b
        .dword 0x6e77cf25c35cbde2, 0xe3db5a88c56aada5, 0xc9c18713fa1d12de
        .dword 0x869d7866db6681d9, 0x455b231bc6ea2a69, 0xb90c755efdc4e567
        .dword 0x0d9e40d2bdf09eaf, 0x4cb9a04361ce0bf4, 0x4a8fdbc8cbc9e731

        .data   0x20000
out1:   .space  240
        .data   0x20100
out2:   .space  240
        .data   0x20200
out3:   .space  480

        .text
        S.LI    s1, idx
        S.LI    s2, src
        S.LI    s4, out1
        S.LI    s5, out2
        S.LI    s6, out3
        S.LI    s3, 30
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v2   ; indices
        V.LD    [s2, lc0<<3, 0], ->v3   ; data
        V.SD    v3, [s4 + (v2 << 3)]    ; EA = s4 + (v2 << (3 + 0))
        V.SD.U  v3, [s5 + (v2 << 3)]    ; EA = s5 + (v2 << 3)
        V.SD    v3, [s6 + (v2 << (3 + 1))] ; EA = s6 + (v2 << 4)
        ENDLOOP
        HALT

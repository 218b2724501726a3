; copy.s -- contiguous word copy.
;
; Copies N = 70 32-bit words from src (0x10000, a read-only page) to dst (0x20000)
; with one hardware loop. Each iteration moves VL words with the contiguous form
; (lane i touches base + ((LC0BASE + i) << 2)); 70 is not a multiple of any VL > 2, so
; the last iteration runs under the tail mask. The word after dst[69] must stay zero.
; s5 is a checksum: the wrapping sum of the words, sign-extended to 64 bits by V.LW.
;
; expect status halted
; expect s3 0x46
; expect s5 0x44ad7d6c9
; expect mem 0x20000 cd62c6945fb3dcd8326edb3191758be847b21af784c90a8aa6b789ec6a1bd25b8d6696770ddf6b0c5036d9a9d0b5e68028faea36a57a1f9ad615c1382d73e3ea349bdc491857477ce19d42b1f48373c8e7525e3604cd3b5443669af806971f7025d1021216895741863b7b31b9a83b2955c3bf16b965f9715aa317c5e0538e89f5ecd35dc3700d31332bc078738349c9b29676532254233d08692ea316c18bca619e6567d6fc1b6c4a0851354a251a1034931e6e4e39bc77faefe54dc61935362b555d1c9dadfba6e2c8c9d2445cfa9f031d1eae5da41a540ec02faaabfbdedbb604e8e134fd6e44aa510765364845c8996218619271a73a4d91476ca3b4ab1318e190676a8595bec3553fabe7971e6be533ab01042b30df
; expect mem 0x20118 00000000

        .mem    0x10000, 0x1000, r
        .mem    0x20000, 0x1000, rw

        .data   0x10000
src:
        .word  0x94c662cd, 0xd8dcb35f, 0x31db6e32, 0xe88b7591, 0xf71ab247, 0x8a0ac984
        .word  0xec89b7a6, 0x5bd21b6a, 0x7796668d, 0x0c6bdf0d, 0xa9d93650, 0x80e6b5d0
        .word  0x36eafa28, 0x9a1f7aa5, 0x38c115d6, 0xeae3732d, 0x49dc9b34, 0x7c475718
        .word  0xb1429de1, 0xc87383f4, 0x365e52e7, 0x543bcd04, 0xf89a6643, 0x701f9706
        .word  0x1202d125, 0x41578916, 0x317b3b86, 0x293ba8b9, 0x16bfc355, 0x71f965b9
        .word  0xc517a35a, 0x898e53e0, 0x5dd3ecf5, 0x310d70c3, 0x78c02b33, 0xc9498373
        .word  0x537696b2, 0x3d235422, 0xa32e6908, 0xca8bc116, 0x67659e61, 0x6c1bfcd6
        .word  0x3551084a, 0x101a254a, 0x6e1e9334, 0x77bc394e, 0x4de5effa, 0x363519c6
        .word  0x1c5d552b, 0xa6fbad9d, 0xd2c9c8e2, 0x9ffa5c44, 0xae1e1d03, 0x541aa45d
        .word  0xaa2fc00e, 0xdbdefbab, 0xe1e804b6, 0x446efd34, 0x650751aa, 0xc8454836
        .word  0x61186299, 0x3aa77192, 0x6c47914d, 0x13abb4a3, 0x6790e118, 0xbe95856a
        .word  0xab3f55c3, 0x6b1e97e7, 0x01ab33e5, 0xdf302b04

        .data   0x20000
dst:    .space  284

        .text
        S.LI    s1, src
        S.LI    s2, dst
        S.LI    s3, 70                  ; element count = trip count
        LOOP    s3                      ; lanes i < 70 - LC0BASE are active
        V.LW    [s1, lc0<<2, 0], ->v1   ; v1[i] = src[LC0BASE + i]
        V.SW    v1, [s2, lc0<<2, 0]     ; dst[LC0BASE + i] = v1[i]
        V.ADD   v2, v2, v1              ; per-lane running sum (active lanes only)
        ENDLOOP
        V.REDSUM s5, v2                 ; mask is all ones again after the loop
        HALT

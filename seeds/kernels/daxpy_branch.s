; daxpy_branch.s -- y = a*x + y in f64 (a = 1.5) over N = 128 doubles, twice, in the two
; shapes a compiler emits for a loop it does not map to LOOP/ENDLOOP (a branch loop stepping
; by VL, N a multiple of every VL):
; 1. lane offsets built once before the loop (V.LANEID; V.SHL), and per iteration an index
;    vector that adds the iteration's byte offset to them (V.ADD v1, v0, s8), used by
;    register-offset loads and a store: y.
; 2. a vector of lane addresses bumped by the stride every iteration (V.ADD v0, v0, s6),
;    used as vector bases with an immediate, and the second array's addresses made from it:
;    w, which starts as a copy of y.
; Both compute 3.5 i + 0.75 exactly for the first 128 elements (the checked ones); a
; larger N (`--set N=1048576`, as `lanejit bench` FILE runs take it) goes on into filler
; data (x = 1.5, y = w = 2). The JIT tests at loop entry that the offsets step by one element
; and makes each access one contiguous access (jit/src/translate/mem.rs). One element = one
; update of y or w.
;
; expect status halted
; expect mem y:f64 0.75 4.25 7.75 11.25 14.75 18.25 21.75 25.25
; expect mem y_end:f64 420.75 424.25 427.75 431.25 434.75 438.25 441.75 445.25
; expect mem w:f64 0.75 4.25 7.75 11.25 14.75 18.25 21.75 25.25
; expect mem w_end:f64 420.75 424.25 427.75 431.25 434.75 438.25 441.75 445.25
; bench: elements=E

        .equ    N, 128                  ; a multiple of 64 (every VL)
        .equ    E, N + N
        .mem    0x1000000, 0x1100000, rw
        .mem    0x2130000, 0x1100000, rw
        .mem    0x3260000, 0x1100000, rw

        .data   0x1000000
x:      .double 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5, 32.5, 33.5, 34.5, 35.5, 36.5, 37.5, 38.5, 39.5, 40.5, 41.5, 42.5, 43.5, 44.5, 45.5, 46.5, 47.5, 48.5, 49.5, 50.5, 51.5, 52.5, 53.5, 54.5, 55.5, 56.5, 57.5, 58.5, 59.5, 60.5, 61.5, 62.5, 63.5, 64.5, 65.5, 66.5, 67.5, 68.5, 69.5, 70.5, 71.5, 72.5, 73.5, 74.5, 75.5, 76.5, 77.5, 78.5, 79.5, 80.5, 81.5, 82.5, 83.5, 84.5, 85.5, 86.5, 87.5, 88.5, 89.5, 90.5, 91.5, 92.5, 93.5, 94.5, 95.5, 96.5, 97.5, 98.5, 99.5, 100.5, 101.5, 102.5, 103.5, 104.5, 105.5, 106.5, 107.5, 108.5, 109.5, 110.5, 111.5, 112.5, 113.5, 114.5, 115.5, 116.5, 117.5, 118.5, 119.5, 120.5, 121.5, 122.5, 123.5, 124.5, 125.5, 126.5, 127.5
        .fill   N, 8, 0x3ff8000000000000
        .data   0x2130440
y:      .double 0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0, 52.0, 54.0, 56.0, 58.0, 60.0, 62.0, 64.0, 66.0, 68.0, 70.0, 72.0, 74.0, 76.0, 78.0, 80.0, 82.0, 84.0, 86.0, 88.0, 90.0, 92.0, 94.0, 96.0, 98.0, 100.0, 102.0, 104.0, 106.0, 108.0, 110.0, 112.0, 114.0, 116.0, 118.0, 120.0, 122.0, 124.0, 126.0, 128.0, 130.0, 132.0, 134.0, 136.0, 138.0, 140.0, 142.0, 144.0, 146.0, 148.0, 150.0, 152.0, 154.0, 156.0, 158.0, 160.0, 162.0, 164.0, 166.0, 168.0, 170.0, 172.0, 174.0, 176.0, 178.0, 180.0, 182.0, 184.0, 186.0, 188.0, 190.0, 192.0, 194.0, 196.0, 198.0, 200.0, 202.0, 204.0, 206.0, 208.0, 210.0, 212.0, 214.0, 216.0, 218.0, 220.0, 222.0, 224.0, 226.0, 228.0, 230.0, 232.0, 234.0, 236.0, 238.0, 240.0, 242.0, 244.0, 246.0, 248.0, 250.0, 252.0, 254.0
        .fill   N, 8, 0x4000000000000000
        .data   0x2130800
y_end:
        .data   0x3260880
w:      .double 0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0, 32.0, 34.0, 36.0, 38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0, 52.0, 54.0, 56.0, 58.0, 60.0, 62.0, 64.0, 66.0, 68.0, 70.0, 72.0, 74.0, 76.0, 78.0, 80.0, 82.0, 84.0, 86.0, 88.0, 90.0, 92.0, 94.0, 96.0, 98.0, 100.0, 102.0, 104.0, 106.0, 108.0, 110.0, 112.0, 114.0, 116.0, 118.0, 120.0, 122.0, 124.0, 126.0, 128.0, 130.0, 132.0, 134.0, 136.0, 138.0, 140.0, 142.0, 144.0, 146.0, 148.0, 150.0, 152.0, 154.0, 156.0, 158.0, 160.0, 162.0, 164.0, 166.0, 168.0, 170.0, 172.0, 174.0, 176.0, 178.0, 180.0, 182.0, 184.0, 186.0, 188.0, 190.0, 192.0, 194.0, 196.0, 198.0, 200.0, 202.0, 204.0, 206.0, 208.0, 210.0, 212.0, 214.0, 216.0, 218.0, 220.0, 222.0, 224.0, 226.0, 228.0, 230.0, 232.0, 234.0, 236.0, 238.0, 240.0, 242.0, 244.0, 246.0, 248.0, 250.0, 252.0, 254.0
        .fill   N, 8, 0x4000000000000000
        .data   0x3260c40
w_end:

        .text
        S.LI    s1, x
        S.LI    s2, y
        S.LI    s3, f64(1.5)
        S.LI    s4, N
        S.VL    s5
        S.SHL   s6, s5, 3               ; bytes per iteration
        V.LANEID v0
        V.SHL   v0, v0, 3               ; lane byte offsets
        S.MOV   s7, s0                  ; elements done
        S.MOV   s8, s0                  ; byte offset
        J       one
one:    V.ADD   v1, v0, s8
        V.LD    [s1 + v1], ->v2         ; x[i]
        V.LD    [s2 + v1], ->v3         ; y[i]
        V.FMA.D v3, v2, s3
        V.SD.U  v3, [s2 + v1]
        S.ADD   s8, s8, s6
        S.ADD   s7, s7, s5
        BLT     s7, s4, one

        S.LI    s9, w
        S.SUB   s10, s9, s1             ; from x to w
        V.ADD   v0, v0, s1              ; lane addresses in x
        S.MOV   s7, s0
        J       two
two:    V.LDI.U [v0 + 0], ->v2          ; x[i]
        V.ADD   v4, v0, s10
        V.LDI.U [v4 + 0], ->v3          ; w[i]
        V.FMA.D v3, v2, s3
        V.SDI.U v3, [v4 + 0]
        V.ADD   v0, v0, s6              ; the next iteration's addresses
        S.ADD   s7, s7, s5
        BLT     s7, s4, two
        HALT

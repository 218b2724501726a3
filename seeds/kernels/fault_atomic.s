; fault_atomic.s -- fault suppression and precise, atomic traps.
;
; 1. With an all-zero mask (V.SETMASK s0) a store aimed at a read-only page accesses
;    nothing and cannot fault.
; 2. A hardware loop with trip 0 skips its body (whose store would fault).
; 3. V.SD v3, [s1 + (v2 << 3)] with v2[i] = i - 1: lane 0 targets 0x10ff8 (read-only page),
;    every other lane 0x11000 + 8*(i-1) (read-write). The store traps and writes nothing at
;    all: the read-write lanes do not land either. The same holds for every VL.
;    Trap (not expressible as an expect line): kind permission_fault, lane 0, ea 0x10ff8,
;    space memory, access write, pc 0x88 (the V.SD); 12 instructions retired.
; The instruction after the trap never runs, so s5 stays 0.
;
; expect status trapped
; expect trap permission_fault pc 0x88 lane 0 ea 0x10ff8 space memory access write
; expect instructions 12
; expect s7 0x2
; expect s5 0x0
; expect s1 0x11000
; expect mem 0x10fc0 a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5
; expect mem 0x11000 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a
; expect mem 0x11100 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a

        .mem    0x10000, 0x1000, r
        .mem    0x11000, 0x1000, rw

        .data   0x10000
ro:     .fill   512, 8, 0xa5a5a5a5a5a5a5a5
        .data   0x11000
buf:    .fill   64, 8, 0x5a5a5a5a5a5a5a5a

        .text
        S.LI    s1, buf
        S.LI    s6, ro
        V.LANEID v1
        V.SUB   v2, v1, 1               ; v2[i] = i - 1 (lane 0: -1)
        V.ADD   v3, v1, 0x100           ; data

        V.SETMASK s0                    ; 1. no lane active
        V.SD    v3, [s6, lc0<<3, 0]     ;    read-only page, but nothing is accessed
        S.LI    s3, -1
        V.SETMASK s3                    ;    all lanes active again
        S.ADD   s7, s7, 1

        LOOP    s0                      ; 2. trip 0: straight past ENDLOOP
        V.SD    v3, [s6, lc0<<3, 0]     ;    never executed
        ENDLOOP
        S.ADD   s7, s7, 1

        V.SD    v3, [s1 + (v2 << 3)]    ; 3. lane 0 -> 0x10ff8: permission_fault, nothing written
        S.LI    s5, 1                   ;    not reached
        HALT

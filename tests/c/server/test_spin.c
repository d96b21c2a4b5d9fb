/* spin.h's decision on its own: the recent-client list (the max_clients + 1 seen last, most recent
 * first), the gate over it, the one-second window, and the back-off after 4 empty polls in a row. */
#include <criterion/criterion.h>

#include "spin.h"

Test(spin, gate_counts_distinct_recent_clients) {
    hw_spin s;
    hw_spin_init(&s, 200, 2);
    cr_assert(hw_spin_should(&s, 0.0), "no client yet: none over the gate");
    hw_spin_seen(&s, "a", 1, 0.0);
    hw_spin_seen(&s, "a", 1, 0.1);
    hw_spin_seen(&s, "b", 1, 0.2);
    cr_assert_eq(hw_spin_clients(&s, 0.3), 2);
    cr_assert(hw_spin_should(&s, 0.3), "two clients, at most two allowed");
    hw_spin_seen(&s, "c", 1, 0.4);
    cr_assert_eq(hw_spin_clients(&s, 0.4), 3, "three: one over the gate");
    cr_assert_not(hw_spin_should(&s, 0.4));
    cr_assert_eq(s.gated, 1);
    hw_spin_seen(&s, "d", 1, 0.5); /* a fourth pushes out the least recent (a) */
    cr_assert_eq(s.nrecent, 3);
    hw_spin_seen(&s, "c", 1, 0.6);
    cr_assert_eq(s.recent[0].t, 0.6, "a client seen again moves to the front");
    /* b (0.2) drops out of the window at 1.2+: then c and d are the recent ones */
    cr_assert_not(hw_spin_should(&s, 1.1));
    cr_assert(hw_spin_should(&s, 1.25));
    cr_assert_eq(hw_spin_clients(&s, 1.25), 2);
    cr_assert_eq(hw_spin_clients(&s, 3.0), 0);
}

Test(spin, routing_ids_of_any_length_are_told_apart) {
    hw_spin s;
    hw_spin_init(&s, 200, 1);
    unsigned char a[5] = {0, 0, 0, 0, 1}, b[5] = {0, 0, 0, 0, 2}, big[255];
    for (int i = 0; i < 255; i++) big[i] = (unsigned char)i;
    hw_spin_seen(&s, a, 5, 0);
    hw_spin_seen(&s, a, 5, 0);
    cr_assert(hw_spin_should(&s, 0), "one client, one allowed");
    hw_spin_seen(&s, b, 5, 0);
    cr_assert_not(hw_spin_should(&s, 0), "two clients, one allowed");
    hw_spin_init(&s, 200, 1);
    hw_spin_seen(&s, big, 255, 0);
    hw_spin_seen(&s, big, 254, 0);
    cr_assert_eq(hw_spin_clients(&s, 0), 2);
}

Test(spin, off_never_polls) {
    hw_spin s;
    hw_spin_init(&s, 0, 4);
    cr_assert_not(hw_spin_should(&s, 0));
    hw_spin_init(&s, 200, 0); /* --spin-clients 0, or one CPU */
    hw_spin_seen(&s, "a", 1, 0);
    cr_assert_not(hw_spin_should(&s, 0));
    hw_spin_init(&s, 200, 1000);
    cr_assert_eq(s.max_clients, HW_SPIN_MAX_CLIENTS, "clamped");
}

Test(spin, backs_off_after_four_misses_in_a_row) {
    hw_spin s;
    hw_spin_init(&s, 200, 1);
    hw_spin_seen(&s, "a", 1, 0);
    int polls = 0;
    for (int w = 0; w < 30; w++) { /* 30 waits whose polls all miss */
        if (!hw_spin_should(&s, 0)) continue;
        polls++;
        hw_spin_result(&s, false);
    }
    /* 4 polls, then one after 1, 3 and 7 blocking waits (waits 6, 10 and 18; the next after 15 more, past the 30th) */
    cr_assert_eq(polls, 7, "%d polls", polls);
    cr_assert_eq(s.misses, 7);
    hw_spin_result(&s, true); /* a caught request starts over */
    cr_assert_eq(s.backoff, 0);
    cr_assert_eq(s.row, 0);
    cr_assert_eq(s.hits, 1);
}

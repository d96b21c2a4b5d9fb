/* The router's inline fast path (README "Design changes"): cheap ops of an idle session run on
 * the router thread and answer exactly as a worker would; expensive ones stay on the workers;
 * pipelined requests on the quiet path (nothing out at a worker: the router waits on its socket
 * alone) all come back, in order; and the cost rule the decision reads (session_cost_record). */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "cpus.h"
#include "harness.h"
#include "session.h"
#include "worker_int.h"

static srv *start_alone(double inline_us, double alone_us) {
    static srv S[4];
    static int n;
    srv *s = &S[n++ % 4];
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.workers = 2;
    o.inline_us = inline_us;
    o.inline_alone_us = alone_us;
    srv_start_opts(s, &o);
    return s;
}

static srv *start(double inline_us) { return start_alone(inline_us, 0); }

static char *make_diag(void *c, const char *cfg) {
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":%s}", cfg);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    char *tok = strdup(json_string_value(json_object_get(r, "session")));
    json_decref(r);
    r = call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":7}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    return tok;
}

static json_int_t stat_int(void *c, const char *key) {
    json_t *r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_not_null(json_object_get(r, key), "stats has no '%s'", key);
    json_int_t v = json_integer_value(json_object_get(r, key));
    json_decref(r);
    return v;
}

/* the replies of `n` steps with actions derived from the step index, as one JSON text */
static char *run_steps(void *c, const char *tok, int n) {
    json_t *all = json_array();
    for (int i = 0; i < n; i++) {
        json_t *r = call(c, "{\"op\":\"step\",\"v\":1,\"id\":%d,\"session\":\"%s\",\"action\":[%d,%d,%d,%d]}", i, tok, i % 5, (i / 2) % 5,
                         (i * 3) % 5, 4 - i % 5);
        cr_assert_null(err_code(r), "%s", err_msg(r));
        json_array_append_new(all, r);
    }
    char *txt = json_dumps(all, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(all);
    return txt;
}

Test(inline, cheap_steps_run_inline_and_answer_as_a_worker_does, .timeout = 60) {
    srv *a = start(5000), *b = start(0); /* b: --inline-us 0, every op at a worker */
    void *ca = cli_new(a->ep), *cb = cli_new(b->ep);
    const char *cfg = "{\"dims\":4,\"choices\":5,\"episode_length\":1000}";
    char *ta = make_diag(ca, cfg), *tb = make_diag(cb, cfg);
    json_int_t before = stat_int(ca, "inline_ops");
    char *ra = run_steps(ca, ta, 40), *rb = run_steps(cb, tb, 40);
    cr_assert_str_eq(ra, rb, "inline replies differ from the workers'");
    /* the first step of the session is measured at a worker; the rest are well under 5 ms (a
     * step preempted for 5 ms of wall time sends the next one to a worker: a few may) */
    cr_assert_geq(stat_int(ca, "inline_ops") - before, 30);
    cr_assert_eq(stat_int(cb, "inline_ops"), 0);
    free(ra);
    free(rb);
    free(ta);
    free(tb);
    cli_close(ca);
    cli_close(cb);
    cr_assert_eq(srv_stop(a), 0);
    cr_assert_eq(srv_stop(b), 0);
}

/* maestro-v0's steps carry an info object of 19 keys, which an inline step frees only after the
 * reply is sent: the replies must still be the workers' */
Test(inline, maestro_steps_with_their_info_answer_as_a_worker_does, .timeout = 60) {
    srv *a = start(5000), *b = start(0);
    void *ca = cli_new(a->ep), *cb = cli_new(b->ep);
    char *tok[2];
    void *cs[2] = {ca, cb};
    char *txt[2];
    for (int k = 0; k < 2; k++) {
        json_t *r = call(cs[k], "{\"op\":\"make\",\"v\":1,\"env\":\"maestro-v0\",\"config\":{\"model\":\"mobilenet_v2\",\"layer\":2,"
                                "\"episode_length\":1000}}");
        cr_assert_null(err_code(r), "%s", err_msg(r));
        tok[k] = strdup(json_string_value(json_object_get(r, "session")));
        json_decref(r);
        json_decref(call(cs[k], "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":3}", tok[k]));
        json_t *all = json_array();
        int full = 0;
        for (int i = 0; i < 30; i++) { /* even steps: bench_server's (valid) mapping; odd: varied */
            r = i % 2 ? call(cs[k], "{\"op\":\"step\",\"v\":1,\"id\":%d,\"session\":\"%s\",\"action\":[%d,1,0,1,%d,2,0,0,3,%d]}", i, tok[k],
                             i % 4, (i * 3) % 6, 5 - i % 6)
                      : call(cs[k], "{\"op\":\"step\",\"v\":1,\"id\":%d,\"session\":\"%s\",\"action\":[3,1,0,1,5,2,0,0,3,5]}", i, tok[k]);
            cr_assert_null(err_code(r), "%s", err_msg(r));
            full += json_object_size(json_object_get(r, "info")) >= 15; /* 19 keys when the mapping is valid */
            json_array_append_new(all, r);
        }
        cr_assert_geq(full, 15, "the full info object is in the replies of valid mappings");
        txt[k] = json_dumps(all, JSON_SORT_KEYS | JSON_COMPACT);
        json_decref(all);
    }
    cr_assert_str_eq(txt[0], txt[1], "inline maestro-v0 replies differ from the workers'");
    cr_assert_gt(stat_int(ca, "inline_ops"), 20);
    for (int k = 0; k < 2; k++) {
        free(txt[k]);
        free(tok[k]);
    }
    cli_close(ca);
    cli_close(cb);
    cr_assert_eq(srv_stop(a), 0);
    cr_assert_eq(srv_stop(b), 0);
}

Test(inline, expensive_steps_stay_on_the_workers, .timeout = 60) {
    srv *s = start(200);
    void *c = cli_new(s->ep);
    /* 20 ms a step, over --inline-us 200 even in CPU time on a loaded machine (diag-v0 spins
     * for step_us of wall time, so its CPU time is less when the thread is preempted) */
    char *tok = make_diag(c, "{\"step_us\":20000}");
    json_int_t before = stat_int(c, "inline_ops");
    free(run_steps(c, tok, 5));
    cr_assert_eq(stat_int(c, "inline_ops"), before, "a 20 ms step ran on the router thread");
    free(tok);
    cli_close(c);
    cr_assert_eq(srv_stop(s), 0);
}

Test(inline, pipelined_requests_all_come_back_in_order, .timeout = 60) {
    srv *s = start(25);
    void *c = cli_new(s->ep);
    char *cheap = make_diag(c, "{\"episode_length\":100000}"), *slow = make_diag(c, "{\"step_us\":2000,\"episode_length\":100000}");
    enum { N = 120 };
    /* cheap (inline once measured) and slow (at a worker) steps, and pings, sent without waiting */
    for (int i = 0; i < N; i++) {
        if (i % 3 == 2) send_json(c, "{\"op\":\"ping\",\"v\":1,\"id\":%d}", i);
        else send_json(c, "{\"op\":\"step\",\"v\":1,\"id\":%d,\"session\":\"%s\",\"action\":[1,2,3,4]}", i, i % 3 ? slow : cheap);
    }
    int cheap_next = 0, slow_next = 1, ping_next = 2;
    for (int i = 0; i < N; i++) {
        json_t *r = recv_reply(c);
        cr_assert_not_null(r, "reply %d of %d never came", i, N);
        cr_assert_null(err_code(r), "%s", err_msg(r));
        int id = (int)json_integer_value(json_object_get(r, "id"));
        /* per session (and for the router's own pings) replies keep the order of the requests */
        int *next = id % 3 == 0 ? &cheap_next : id % 3 == 1 ? &slow_next : &ping_next;
        cr_assert_eq(id, *next, "reply %d came before %d", id, *next);
        *next += 3;
        json_decref(r);
    }
    free(cheap);
    free(slow);
    cli_close(c);
    cr_assert_eq(srv_stop(s), 0);
}

Test(inline, cost_rule_records_cpu_time_and_distrusts_long_wall_times) {
    session s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < OP_COUNT; k++) s.cost_us[k] = 1e9;
    session_cost_record(&s, OP_STEP, 8.0, false, 25); /* a worker's CPU time: the first sample is taken as it is */
    cr_assert_float_eq(s.cost_us[OP_STEP], 8.0, 1e-12);
    session_cost_record(&s, OP_STEP, 3.0, true, 25); /* an inline wall time under the limit bounds the CPU time: an EWMA sample */
    cr_assert_float_eq(s.cost_us[OP_STEP], 0.8 * 8.0 + 0.2 * 3.0, 1e-12);
    cr_assert_not(s.cost_check[OP_STEP]);
    /* over the limit it may be preemption: not recorded; the next such op still runs inline, timed
     * on the CPU clock (sending it to a worker to be measured costs two thread hand-offs) */
    cr_assert(session_time_on_cpu(&s, OP_STEP, false), "a worker always times on the CPU clock");
    cr_assert_not(session_time_on_cpu(&s, OP_STEP, true), "an inline run is timed on the wall clock");
    session_cost_record(&s, OP_STEP, 400.0, true, 25);
    cr_assert_float_eq(s.cost_us[OP_STEP], 0.8 * 8.0 + 0.2 * 3.0, 1e-12);
    cr_assert(s.cost_check[OP_STEP]);
    cr_assert_not(s.cost_check[OP_RESET], "only the op that ran is checked");
    cr_assert(session_inline_ok(&s, OP_STEP, 25), "an op checked after a long wall time stays on the inline path");
    cr_assert(session_time_on_cpu(&s, OP_STEP, true), "and that run is timed on the CPU clock");
    /* a cheap CPU time clears the check: back to the wall clock */
    session_cost_record(&s, OP_STEP, 9.0, false, 25);
    cr_assert_not(s.cost_check[OP_STEP]);
    cr_assert_not(session_time_on_cpu(&s, OP_STEP, true));
    cr_assert(session_inline_ok(&s, OP_STEP, 25));
    /* an op that really got expensive: its CPU time is recorded and it leaves the inline path */
    session_cost_record(&s, OP_STEP, 400.0, true, 25);
    double before = s.cost_us[OP_STEP];
    session_cost_record(&s, OP_STEP, 400.0, false, 25);
    cr_assert_float_eq(s.cost_us[OP_STEP], 0.8 * before + 0.2 * 400.0, 1e-9);
    cr_assert_not(s.cost_check[OP_STEP]);
    cr_assert_not(session_inline_ok(&s, OP_STEP, 25), "an op that really costs 400 us leaves the inline path");
}

/* --inline-alone-us: an op over --inline-us but under it runs inline while its client is alone
 * (nothing at a worker, nothing queued or waiting on the socket, the previous request its own);
 * a second client stepping in turn breaks the run, and 0 turns it off */
Test(inline, ops_of_a_client_alone_run_inline_up_to_inline_alone_us, .timeout = 60) {
    srv *on = start_alone(25, 20000), *off = start_alone(25, 0);
    void *c = cli_new(on->ep), *c0 = cli_new(off->ep);
    const char *cfg = "{\"step_us\":500,\"episode_length\":100000}"; /* 0.5 ms a step: over 25 us */
    char *t = make_diag(c, cfg), *t0 = make_diag(c0, cfg);
    json_int_t before = stat_int(c, "inline_alone_ops"), before0 = stat_int(c0, "inline_ops");
    char *r = run_steps(c, t, 20), *r0 = run_steps(c0, t0, 20);
    cr_assert_str_eq(r, r0, "replies of ops run inline while alone differ from the workers'");
    /* the first step is measured at a worker; the stats request between two runs is the same
     * client's but session-less, so the step after it waits for the next step */
    cr_assert_geq(stat_int(c, "inline_alone_ops") - before, 17);
    cr_assert_eq(stat_int(c0, "inline_ops"), before0, "--inline-alone-us 0 ran a 0.5 ms step inline");
    free(r);
    free(r0);
    /* two clients of one server stepping in turn: never alone */
    void *d = cli_new(on->ep);
    char *u = make_diag(d, cfg);
    free(run_steps(d, u, 2)); /* its first step is measured at a worker */
    before = stat_int(c, "inline_alone_ops");
    for (int i = 0; i < 10; i++) {
        json_decref(call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,2,3,4]}", t));
        json_decref(call(d, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,2,3,4]}", u));
    }
    cr_assert_eq(stat_int(c, "inline_alone_ops"), before, "steps of two clients in turn ran inline as if alone");
    free(t);
    free(t0);
    free(u);
    cli_close(c);
    cli_close(c0);
    cli_close(d);
    cr_assert_eq(srv_stop(on), 0);
    cr_assert_eq(srv_stop(off), 0);
}

/* --spin-us (router.c recv_waiting, spin.h): a client stepping in a loop is caught by the poll
 * after each reply, with the same replies as a server that sleeps (--spin-us 0); one that thinks
 * longer than the poll between requests makes it miss, and after 4 misses in a row the polls back
 * off (1, 3, 7, 15 ... waits blocking at once): 30 requests 20 ms apart cost 7 polls, not 30. */
Test(inline, spin_us_polls_for_a_stepping_client_and_backs_off_for_a_thinking_one, .timeout = 60) {
    srv A, B;
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.spin_us = 0;
    srv_start_opts(&A, &o);
    o.spin_us = 5000; /* long, so that a client slowed by the sanitizers is still caught */
    o.spin_clients = 1; /* not half the CPUs of whatever machine runs this */
    srv_start_opts(&B, &o);
    void *ca = cli_new(A.ep), *cb = cli_new(B.ep);
    char *ta = make_diag(ca, "{\"episode_length\":1000}"), *tb = make_diag(cb, "{\"episode_length\":1000}");
    char *ra = run_steps(ca, ta, 200), *rb = run_steps(cb, tb, 200);
    cr_assert_str_eq(ra, rb, "a polling server answers as a sleeping one");
    cr_assert_eq(stat_int(ca, "spin_hits") + stat_int(ca, "spin_misses"), 0, "--spin-us 0: no polls");
    json_int_t hits = stat_int(cb, "spin_hits"), misses = stat_int(cb, "spin_misses");
    cr_assert_geq(hits, 150, "a stepping client is caught by the poll (%lld hits, %lld misses)", (long long)hits, (long long)misses);
    for (int i = 0; i < 30; i++) {
        usleep(20000);
        json_decref(call(cb, "{\"op\":\"ping\",\"v\":1}"));
    }
    json_int_t hits2 = stat_int(cb, "spin_hits"), misses2 = stat_int(cb, "spin_misses");
    /* the stats calls' own waits may be caught; from a fresh start the 30 pings' waits are 4
     * misses, then one after 1, 3 and 7 blocking waits (the 15 after that run past the 30th): 7.
     * A loaded machine may have left misses in a row or a back-off from the 200 steps (fewer), and
     * a caught stats call starts over (a few more): polls, but far fewer than 30 */
    cr_assert(hits2 - hits <= 2, "%lld hits while the client thinks", (long long)(hits2 - hits));
    cr_assert(misses2 - misses >= 2 && misses2 - misses <= 12, "%lld polls missed for 30 requests 20 ms apart (backed off: 7 from a fresh start)",
              (long long)(misses2 - misses));
    free(ta);
    free(tb);
    free(ra);
    free(rb);
    cli_close(ca);
    cli_close(cb);
    cr_assert_eq(srv_stop(&A), 0);
    cr_assert_eq(srv_stop(&B), 0);
}

/* The gate (spin.h): the router polls only while at most --spin-clients clients sent a request in
 * the last second. A second client stepping beside the first stops the polls (counted as gated);
 * a second after it left they start again. The default polls 200 µs for half the CPUs' worth of
 * clients, and not at all with --cpu. */
Test(inline, spin_polls_only_while_few_clients_step, .timeout = 60) {
    srv A;
    hw_server_opts o;
    hw_server_default_opts(&o);
    o.spin_us = 5000;
    o.spin_clients = 1;
    srv_start_opts(&A, &o); /* its readiness ping comes from a client of its own: a ping does not count */
    void *c1 = cli_new(A.ep), *c2 = cli_new(A.ep), *mon = cli_new(A.ep);
    char *t1 = make_diag(c1, "{\"episode_length\":1000}");
    free(run_steps(c1, t1, 60));
    json_int_t hits = stat_int(mon, "spin_hits"), gated = stat_int(mon, "spin_gated");
    cr_assert_geq(hits, 40, "one client (and a monitor asking for stats): polled and caught (%lld hits)", (long long)hits);
    char *t2 = make_diag(c2, "{\"episode_length\":1000}");
    for (int i = 0; i < 60; i++) {
        free(run_steps(c1, t1, 1));
        free(run_steps(c2, t2, 1));
    }
    cr_assert_eq(stat_int(c1, "spin_clients"), 2);
    json_int_t hits2 = stat_int(c1, "spin_hits"), gated2 = stat_int(c1, "spin_gated");
    cr_assert(hits2 - hits <= 3, "two clients over --spin-clients 1: %lld polls caught", (long long)(hits2 - hits));
    cr_assert_geq(gated2 - gated, 110, "two clients: the waits after 120 steps not polled (%lld)", (long long)(gated2 - gated));
    cli_close(c2);
    usleep(1100 * 1000); /* HW_SPIN_WINDOW_S: the second client no longer counts */
    free(run_steps(c1, t1, 60));
    cr_assert_eq(stat_int(c1, "spin_clients"), 1);
    json_int_t hits3 = stat_int(c1, "spin_hits");
    cr_assert_geq(hits3 - hits2, 40, "alone again: polled and caught (%lld hits)", (long long)(hits3 - hits2));
    free(t1);
    free(t2);
    cli_close(c1);
    cli_close(mon);
    cr_assert_eq(srv_stop(&A), 0);

    srv B, C;
    hw_server_default_opts(&o);
    srv_start_opts(&B, &o);
    hw_server_default_opts(&o);
    o.cpu = 0;
    srv_start_opts(&C, &o);
    void *cb = cli_new(B.ep), *cc = cli_new(C.ep);
    cr_assert_eq(stat_int(cb, "spin_us"), 200, "the default poll");
    cr_assert_eq(stat_int(cb, "spin_max_clients"), hw_cpu_count() / 2, "by default half the CPUs the process may run on");
    cr_assert_eq(stat_int(cc, "spin_us"), 0, "--cpu: no polls unless asked");
    cli_close(cb);
    cli_close(cc);
    cr_assert_eq(srv_stop(&B), 0);
    cr_assert_eq(srv_stop(&C), 0);
}

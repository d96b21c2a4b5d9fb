/* Problem instances: JSON/msgpack round trips, errors naming the field, the generator and the
 * named dataset (sizes, determinism, roofline latency tables, alias groups of training). */
#include "mm_fixture.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

static void same_problem(const mm_problem *a, const mm_problem *b) {
    cr_assert_eq(a->T, b->T);
    cr_assert_eq(a->nbuf, b->nbuf);
    cr_assert_eq(a->max_size, b->max_size);
    cr_assert_eq(a->granule, b->granule);
    cr_assert_eq(a->ntensor, b->ntensor);
    cr_assert_eq(a->nalias, b->nalias);
    cr_assert_float_eq(a->copy_ns_per_byte, b->copy_ns_per_byte, 1e-15);
    for (int32_t t = 0; t < a->T; t++) {
        cr_assert_eq(a->ins[t].nvar, b->ins[t].nvar);
        cr_assert_eq(a->ins[t].supply, b->ins[t].supply, "supply[%d]", t);
        for (int m = 0; m < (1 << a->ins[t].nvar); m++) cr_assert_eq(a->ins[t].lat[m], b->ins[t].lat[m]);
    }
    for (int32_t i = 0; i < a->nbuf; i++) {
        const mm_buffer *x = &a->buf[i], *y = &b->buf[i];
        cr_assert(x->size == y->size && x->is_output == y->is_output && x->tensor == y->tensor && x->alias == y->alias &&
                      x->lr_start == y->lr_start && x->lr_end == y->lr_end && x->var_bit == y->var_bit && x->demand == y->demand,
                  "buffer %d differs", i);
    }
}

Test(mmap_problem, json_and_msgpack_round_trip) {
    hw_err err;
    mm_problem *p = mm_dataset_load("alexnet_train_batch_32", 0, &err);
    cr_assert(p, "%s", err.msg);
    char path[64] = "/tmp/mmap_rt_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    char pj[96], pm[96];
    snprintf(pj, sizeof pj, "%s.json", path);
    snprintf(pm, sizeof pm, "%s.msgpack", path);
    cr_assert_eq(mm_problem_save(p, pj, &err), 0, "%s", err.msg);
    cr_assert_eq(mm_problem_save(p, pm, &err), 0, "%s", err.msg);
    mm_problem *q = mm_problem_load(pj, &err);
    cr_assert(q, "%s", err.msg);
    same_problem(p, q);
    mm_problem *r = mm_problem_open(pm, 0, &err);
    cr_assert(r, "%s", err.msg);
    same_problem(p, r);
    /* the same game is played on the reloaded problem */
    mm_game *g1 = mm_game_new(p), *g2 = mm_game_new(r);
    cr_assert_eq(mm_play(g1, 1, 9), mm_play(g2, 1, 9));
    mm_game_free(g1);
    mm_game_free(g2);
    mm_problem_free(p);
    mm_problem_free(q);
    mm_problem_free(r);
    unlink(pj);
    unlink(pm);
    unlink(path);
}

static void bad(const char *text, const char *field) {
    json_t *doc = json_loads(text, 0, NULL);
    cr_assert(doc, "test JSON invalid: %s", text);
    hw_err err = {0};
    mm_problem *p = mm_problem_from_json(doc, &err);
    json_decref(doc);
    cr_assert_null(p, "accepted: %s", text);
    cr_assert_eq(err.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(err.msg, field), "error '%s' does not name '%s'", err.msg, field);
}

Test(mmap_problem, errors_name_the_field) {
    bad("{\"instructions\":[]}", "cmem");
    bad("{\"cmem\":{\"max_size\":4,\"granule\":1},\"instructions\":[{\"buffers\":[{\"size\":1,\"tensor_id\":1}],\"latency\":[2,1]}]}",
        "cmem.copy_ns_per_byte");
    bad("{\"cmem\":{\"max_size\":4,\"granule\":1,\"copy_ns_per_byte\":1,\"x\":1},\"instructions\":[]}", "cmem.x");
    bad("{\"cmem\":{\"max_size\":4,\"granule\":1,\"copy_ns_per_byte\":1},\"instructions\":[]}", "instructions");
    const char *pre = "{\"cmem\":{\"max_size\":4,\"granule\":1,\"copy_ns_per_byte\":1},\"instructions\":[{\"buffers\":[{\"size\":1,\"tensor_id\":1}],\"latency\":[2,1]},";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"tensor_id\":2}],\"latency\":[2,1]}]}", pre);
    bad(buf, "instructions[1].buffers[0].size");
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"size\":1,\"tensor_id\":2,\"live_range\":[0,5]}],\"latency\":[2,1]}]}", pre);
    bad(buf, "instructions[1].buffers[0].live_range");
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"size\":1,\"tensor_id\":2}],\"latency\":[2]}]}", pre);
    bad(buf, "instructions[1].latency");
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"size\":1,\"tensor_id\":2}],\"latency\":[2,\"x\"]}]}", pre);
    bad(buf, "instructions[1].latency[1]");
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"size\":2,\"tensor_id\":2,\"alias_id\":3},{\"size\":1,\"tensor_id\":4,\"alias_id\":3}],\"latency\":[2,1,1,1]}]}", pre);
    bad(buf, "instructions[1].buffers[1].alias_id");
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"size\":1,\"tensor_id\":2,\"colour\":1}],\"latency\":[2,1]}]}", pre);
    bad(buf, "instructions[1].buffers[0].colour");
    snprintf(buf, sizeof buf, "%s{\"buffers\":[{\"size\":1,\"tensor_id\":2}],\"varying\":[3],\"latency\":[2,1]}]}", pre);
    bad(buf, "instructions[1].varying[0]");
    hw_err err;
    cr_assert_null(mm_problem_open("no_such_program", 0, &err));
    cr_assert(strstr(err.msg, "alexnet_train_batch_32"), "lists the dataset: %s", err.msg);
    cr_assert_null(mm_problem_open("/nonexistent/p.json", 0, &err));
    cr_assert_eq(err.code, HW_E_IO);
}

Test(mmap_problem, defaults_follow_appendix_a) {
    /* supply defaults to L_I(all varied operands in CMEM), demand to size x copy constant,
     * benefit0 = L({}) - L({b}), varying = the 8 largest operands */
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "{\"cmem\":{\"max_size\":1024,\"granule\":1,\"copy_ns_per_byte\":0.5},\"instructions\":[{\"buffers\":[");
    for (int i = 0; i < 10; i++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s{\"size\":%d,\"tensor_id\":%d}", i ? "," : "", 10 + i, i);
    n += snprintf(buf + n, sizeof buf - (size_t)n, "],\"latency\":[");
    for (int m = 0; m < 256; m++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", m ? "," : "", 1000 - __builtin_popcount(m) * 10 - m % 3);
    snprintf(buf + n, sizeof buf - (size_t)n, "]}]}");
    mm_problem *p = fx_problem(buf);
    cr_assert_eq(p->ins[0].nvar, 8);
    cr_assert_eq(p->buf[0].var_bit, -1, "the two smallest operands are not varied");
    cr_assert_eq(p->buf[1].var_bit, -1);
    for (int i = 2; i < 10; i++) cr_assert_eq(p->buf[i].var_bit, i - 2);
    cr_assert_float_eq(p->ins[0].supply, p->ins[0].lat[255], 1e-12);
    cr_assert_float_eq(p->buf[3].demand, 13 * 0.5, 1e-12);
    cr_assert_float_eq(p->buf[3].benefit0, p->ins[0].lat[0] - p->ins[0].lat[2], 1e-12);
    cr_assert_float_eq(p->buf[0].benefit0, 0, 1e-12);
    mm_problem_free(p);
}

Test(mmap_problem, dataset_sizes_and_determinism) {
    cr_assert_geq(mm_dataset_count(), 10);
    int32_t lo = INT32_MAX, hi = 0;
    hw_err err;
    for (int i = 0; i < mm_dataset_count(); i++) {
        mm_problem *p = mm_dataset_load(mm_dataset_name(i), 0, &err);
        cr_assert(p, "%s: %s", mm_dataset_name(i), err.msg);
        if (p->nbuf < lo) lo = p->nbuf;
        if (p->nbuf > hi) hi = p->nbuf;
        mm_problem_free(p);
    }
    cr_assert(lo >= 100 && lo <= 200, "smallest program has %d buffers (paper: 169)", lo);
    cr_assert(hi >= 15000 && hi <= 17000, "largest program has %d buffers (paper: 16490)", hi);
    mm_problem *a = mm_dataset_load("inference_lstm", 7, &err), *b = mm_dataset_load("inference_lstm", 7, &err),
               *c = mm_dataset_load("inference_lstm", 8, &err);
    same_problem(a, b);
    int differ = 0;
    for (int32_t t = 0; t < a->T; t++) differ |= a->ins[t].lat[0] != c->ins[t].lat[0];
    cr_assert(differ, "the seed changes the latency measurements");
    mm_problem_free(a);
    mm_problem_free(b);
    mm_problem_free(c);
}

Test(mmap_problem, training_program_structure) {
    hw_err err;
    mm_problem *p = mm_dataset_load("mlp_train_batch_16", 0, &err);
    cr_assert(p, "%s", err.msg);
    int updates = 0, groups4 = 0, groups3 = 0;
    for (int32_t t = 0; t < p->T; t++) {
        const mm_instr *I = &p->ins[t];
        if (strstr(I->name, ".update")) {
            updates++;
            /* in-place update: inputs W, dW, M; outputs W', M' aliasing W and M */
            cr_assert_eq(I->nbuf, 5);
            const mm_buffer *W = &p->buf[I->first], *M = &p->buf[I->first + 2], *W2 = &p->buf[I->first + 3], *M2 = &p->buf[I->first + 4];
            cr_assert(W2->is_output && M2->is_output);
            cr_assert_eq(W->alias, W2->alias);
            cr_assert_eq(M->alias, M2->alias);
            cr_assert_neq(W->tensor, W2->tensor);
            cr_assert_eq(W2->lr_end, p->T - 1, "updated weights live to the end of the step");
        }
        /* roofline: every latency is at least the compute bound and L is monotone in S */
        for (int m = 0; m < (1 << I->nvar); m++)
            for (int j = 0; j < I->nvar; j++)
                if (!(m >> j & 1)) cr_assert(I->lat[m | 1 << j] <= I->lat[m] * 1.05, "adding a CMEM operand never slows much (noise 2%%)");
    }
    cr_assert_eq(updates, 8, "one update per weight");
    for (int32_t a = 0; a < p->nalias; a++) {
        groups4 += p->gstart[a + 1] - p->gstart[a] == 4;
        groups3 += p->gstart[a + 1] - p->gstart[a] == 3;
    }
    /* weights: forward use, backward-data use, update input and output (the first layer has
     * no backward-data op: its input is the program input) */
    cr_assert_eq(groups4, 7);
    cr_assert_eq(groups3, 1);
    mm_problem_free(p);
}

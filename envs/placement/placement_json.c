/* placement_json.c - hardware and graph descriptions: NNP-I-like defaults, the JSON formats
 * (schemas/placement-hw.schema.json, schemas/placement-graph.schema.json) and zoo graphs.
 * Every error names the offending field with its full path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/zoo.h"
#include "placement.h"

void pl_hw_default(pl_hw *hw) {
    memset(hw, 0, sizeof *hw);
    snprintf(hw->name, sizeof hw->name, "nnpi-like");
    hw->n_mem = 3;
    /* NNP-I 1000-like: LPDDR4x DRAM, a 24 MB last-level cache, a few MB of fast SRAM. */
    hw->mem[0] = (pl_mem){"DRAM", 32LL << 30, 68e9, 68e9, 100e-9, 1};
    hw->mem[1] = (pl_mem){"LLC", 24LL << 20, 400e9, 400e9, 20e-9, 1};
    hw->mem[2] = (pl_mem){"SRAM", 4LL << 20, 2000e9, 2000e9, 2e-9, 1};
    hw->engines = 12;
    hw->freq_hz = 1e9;
    hw->macs_per_cycle = 4096;
    hw->vector_ops_per_cycle = 256;
    hw->node_overhead = 0;
    hw->element_bytes = 1;
}

/* The "nnp-i" preset: Spring Hill (NNP-I 1000) figures from Hot Chips 31 (Wechsler, Behar and
 * Daga 2019) as summarised by WikiChip; docs/placement.md cites each and marks the guesses. */
static void pl_hw_nnpi(pl_hw *hw) {
    memset(hw, 0, sizeof *hw);
    snprintf(hw->name, sizeof hw->name, "nnp-i");
    hw->n_mem = 3;
    /* LPDDR4x-4200, 128 bits: 67.2 GB/s; 32 GiB. Latency: a guess. */
    hw->mem[0] = (pl_mem){"DRAM", 32LL << 30, 67.2e9, 67.2e9, 100e-9, 1};
    /* 24 MiB LLC (8 x 3 MiB slices on the ring), ~680 GB/s. Latency: a guess. */
    hw->mem[1] = (pl_mem){"LLC", 24LL << 20, 680e9, 680e9, 20e-9, 1};
    /* 4 MiB Deep SRAM per ICE, 12 ICEs, ~6.8 TB/s together: 6.8e12 / 12 per bank. Latency: a guess. */
    hw->mem[2] = (pl_mem){"SRAM", 4LL << 20, 6.8e12 / 12, 6.8e12 / 12, 2e-9, 12};
    hw->engines = 12;              /* 12 ICEs */
    hw->freq_hz = 1e9;             /* a guess (not published) */
    hw->macs_per_cycle = 4096;     /* 4K int8 MACs per ICE */
    hw->vector_ops_per_cycle = 256; /* a guess for the per-ICE vector DSP */
    hw->node_overhead = 0;
    hw->element_bytes = 1;
}

int pl_hw_preset(const char *name, const char *where, pl_hw *hw, hw_err *err) {
    if (!strcmp(name, "nnpi-like")) pl_hw_default(hw);
    else if (!strcmp(name, "nnp-i")) pl_hw_nnpi(hw);
    else return hw_fail(err, HW_E_BAD_CONFIG, "%s: unknown preset '%s' (known: nnpi-like, nnp-i)", where, name);
    return 0;
}

static int check_keys(const json_t *o, const char *const *allowed, const char *where, hw_err *err) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (strcmp(allowed[i], key) == 0) ok = 1;
        if (!ok) {
            char known[256] = "";
            for (int i = 0; allowed[i]; i++) {
                if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
                strncat(known, allowed[i], sizeof known - strlen(known) - 1);
            }
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: unknown field (known: %s)", where, key, known);
        }
    }
    return 0;
}

static json_t *jget(const json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_null(v) ? NULL : v;
}

static int jnum(const json_t *o, const char *key, double def, double lo, double hi, const char *where, double *out,
                hw_err *err) {
    json_t *v = jget(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v)) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected a number", where, key);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: %g out of range [%g, %g]", where, key, x, lo, hi);
    *out = x;
    return 0;
}

static int jint(const json_t *o, const char *key, int64_t def, int64_t lo, int64_t hi, const char *where, int64_t *out,
                hw_err *err) {
    json_t *v = jget(o, key);
    if (!v) {
        *out = def;
        return 0;
    }
    double d = json_is_real(v) ? json_real_value(v) : 0;
    if (!json_is_integer(v) && !(json_is_real(v) && d == floor(d) && fabs(d) < 9e18))
        return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected an integer", where, key);
    int64_t x = json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)d;
    if (x < lo || x > hi)
        return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: %lld out of range [%lld, %lld]", where, key, (long long)x,
                       (long long)lo, (long long)hi);
    *out = x;
    return 0;
}

/* An array of exactly `len` integers in [lo, hi]. */
static int jint_array(const json_t *o, const char *key, int len, int required, const int64_t *def, int64_t lo, int64_t hi,
                      const char *where, int64_t *out, hw_err *err) {
    json_t *v = jget(o, key);
    if (!v) {
        if (required) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: missing (an array of %d integers)", where, key, len);
        for (int i = 0; i < len; i++) out[i] = def[i];
        return 0;
    }
    if (!json_is_array(v) || (int)json_array_size(v) != len)
        return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected an array of %d integers", where, key, len);
    for (int i = 0; i < len; i++) {
        json_t *e = json_array_get(v, (size_t)i);
        if (!json_is_integer(e))
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s[%d]: expected an integer", where, key, i);
        int64_t x = (int64_t)json_integer_value(e);
        if (x < lo || x > hi)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s[%d]: %lld out of range [%lld, %lld]", where, key, i,
                           (long long)x, (long long)lo, (long long)hi);
        out[i] = x;
    }
    return 0;
}

static int jstr(const json_t *o, const char *key, int required, const char *where, const char **out, hw_err *err) {
    json_t *v = jget(o, key);
    if (!v) {
        if (required) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: missing (a string)", where, key);
        *out = NULL;
        return 0;
    }
    if (!json_is_string(v)) return hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected a string", where, key);
    *out = json_string_value(v);
    return 0;
}

int pl_hw_from_json(const json_t *j, const char *where, pl_hw *hw, hw_err *err) {
    static const char *const top[] = {"preset", "name", "element_bytes", "compute", "memories", NULL};
    static const char *const comp[] = {"engines", "freq_ghz", "macs_per_cycle", "vector_ops_per_cycle", "node_overhead_ns", NULL};
    static const char *const memk[] = {"name", "capacity_bytes", "read_gbps", "write_gbps", "latency_ns", "banks", NULL};
    pl_hw_default(hw);
    if (!j) return 0;
    if (json_is_string(j)) return pl_hw_preset(json_string_value(j), where, hw, err);
    if (!json_is_object(j))
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object or a preset name (nnpi-like, nnp-i)", where);
    if (check_keys(j, top, where, err)) return -1;
    const char *preset;
    if (jstr(j, "preset", 0, where, &preset, err)) return -1;
    if (preset) {
        char pp[160];
        snprintf(pp, sizeof pp, "%s.preset", where);
        if (pl_hw_preset(preset, pp, hw, err)) return -1;
    }
    const char *name;
    int64_t eb;
    if (jstr(j, "name", 0, where, &name, err)) return -1;
    if (name) snprintf(hw->name, sizeof hw->name, "%s", name);
    if (jint(j, "element_bytes", 1, 1, 16, where, &eb, err)) return -1;
    hw->element_bytes = (int)eb;
    json_t *c = jget(j, "compute");
    char path[160];
    if (c) {
        snprintf(path, sizeof path, "%s.compute", where);
        if (!json_is_object(c)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", path);
        if (check_keys(c, comp, path, err)) return -1;
        int64_t eng;
        double ghz, ovh;
        if (jint(c, "engines", hw->engines, 1, 1 << 20, path, &eng, err) ||
            jnum(c, "freq_ghz", hw->freq_hz / 1e9, 1e-6, 1e3, path, &ghz, err) ||
            jnum(c, "macs_per_cycle", hw->macs_per_cycle, 1e-6, 1e12, path, &hw->macs_per_cycle, err) ||
            jnum(c, "vector_ops_per_cycle", hw->vector_ops_per_cycle, 1e-6, 1e12, path, &hw->vector_ops_per_cycle, err) ||
            jnum(c, "node_overhead_ns", hw->node_overhead * 1e9, 0, 1e12, path, &ovh, err))
            return -1;
        hw->engines = (int)eng;
        hw->freq_hz = ghz * 1e9;
        hw->node_overhead = ovh * 1e-9;
    }
    json_t *ms = jget(j, "memories");
    if (ms) {
        snprintf(path, sizeof path, "%s.memories", where);
        if (!json_is_array(ms) || json_array_size(ms) < 2 || json_array_size(ms) > PL_MAX_MEMS)
            return hw_fail(err, HW_E_BAD_CONFIG,
                           "%s: expected an array of 2..%d memories, slowest (backing store) first", path, PL_MAX_MEMS);
        hw->n_mem = (int)json_array_size(ms);
        for (int k = 0; k < hw->n_mem; k++) {
            json_t *o = json_array_get(ms, (size_t)k);
            char mp[192];
            snprintf(mp, sizeof mp, "%s[%d]", path, k);
            if (!json_is_object(o)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", mp);
            if (check_keys(o, memk, mp, err)) return -1;
            const char *mn;
            int64_t cap, banks;
            double rb, wb, lat;
            if (jstr(o, "name", 1, mp, &mn, err)) return -1;
            if (!jget(o, "capacity_bytes")) return hw_fail(err, HW_E_BAD_CONFIG, "%s.capacity_bytes: missing", mp);
            if (!jget(o, "read_gbps")) return hw_fail(err, HW_E_BAD_CONFIG, "%s.read_gbps: missing", mp);
            if (jint(o, "capacity_bytes", 0, 1, INT64_MAX / 4, mp, &cap, err) ||
                jnum(o, "read_gbps", 1, 1e-9, 1e9, mp, &rb, err) || jnum(o, "write_gbps", rb, 1e-9, 1e9, mp, &wb, err) ||
                jnum(o, "latency_ns", 0, 0, 1e12, mp, &lat, err) ||
                jint(o, "banks", 1, 1, k == 0 ? 1 : PL_MAX_BANKS, mp, &banks, err))
                return -1;
            if (!*mn || strlen(mn) >= sizeof hw->mem[k].name)
                return hw_fail(err, HW_E_BAD_CONFIG, "%s.name: must be 1..%zu characters", mp, sizeof hw->mem[k].name - 1);
            for (int q = 0; q < k; q++)
                if (strcmp(hw->mem[q].name, mn) == 0)
                    return hw_fail(err, HW_E_BAD_CONFIG, "%s.name: duplicate memory name '%s'", mp, mn);
            snprintf(hw->mem[k].name, sizeof hw->mem[k].name, "%s", mn);
            hw->mem[k].capacity = cap;
            hw->mem[k].read_bw = rb * 1e9;
            hw->mem[k].write_bw = wb * 1e9;
            hw->mem[k].latency = lat * 1e-9;
            hw->mem[k].banks = (int)banks;
        }
    }
    return 0;
}

json_t *pl_hw_to_json(const pl_hw *hw) {
    json_t *ms = json_array();
    for (int k = 0; k < hw->n_mem; k++)
        json_array_append_new(ms, json_pack("{s:s, s:I, s:f, s:f, s:f, s:i}", "name", hw->mem[k].name, "capacity_bytes",
                                            (json_int_t)hw->mem[k].capacity, "read_gbps", hw->mem[k].read_bw / 1e9,
                                            "write_gbps", hw->mem[k].write_bw / 1e9, "latency_ns",
                                            hw->mem[k].latency * 1e9, "banks",
                                            hw->mem[k].banks > 1 ? hw->mem[k].banks : 1));
    return json_pack("{s:s, s:i, s:{s:i, s:f, s:f, s:f, s:f}, s:o}", "name", hw->name, "element_bytes", hw->element_bytes,
                     "compute", "engines", hw->engines, "freq_ghz", hw->freq_hz / 1e9, "macs_per_cycle",
                     hw->macs_per_cycle, "vector_ops_per_cycle", hw->vector_ops_per_cycle, "node_overhead_ns",
                     hw->node_overhead * 1e9, "memories", ms);
}

static int op_from_json(const json_t *v, const char *where, int *op, hw_err *err) {
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0 || x >= PL_OP_COUNT)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s.op: %lld out of range [0, %d]", where, (long long)x, PL_OP_COUNT - 1);
        *op = (int)x;
        return 0;
    }
    if (json_is_string(v)) {
        for (int k = 0; k < PL_OP_COUNT; k++)
            if (strcasecmp(pl_op_names[k], json_string_value(v)) == 0) {
                *op = k;
                return 0;
            }
        return hw_fail(err, HW_E_BAD_CONFIG,
                       "%s.op: unknown op '%s' (known: conv, dwconv, fc, matmul, pool, eltwise, softmax, norm, concat, "
                       "upsample, embed)",
                       where, json_string_value(v));
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "%s.op: %s", where, v ? "expected a string or an integer" : "missing (an op name)");
}

int pl_graph_from_json(const json_t *j, const char *where, pl_graph *g, hw_err *err) {
    static const char *const top[] = {"name", "nodes", NULL};
    static const char *const nk[] = {"name",   "op",  "inputs",   "ifm",   "ofm", "weights", "ops",
                                     "groups", "kernel", "stride", "pad", "dilation", "batch", NULL};
    memset(g, 0, sizeof *g);
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", where);
    if (check_keys(j, top, where, err)) return -1;
    const char *gname;
    if (jstr(j, "name", 0, where, &gname, err)) return -1;
    snprintf(g->name, sizeof g->name, "%s", gname ? gname : "graph");
    json_t *ns = jget(j, "nodes");
    if (!json_is_array(ns) || json_array_size(ns) == 0)
        return hw_fail(err, HW_E_BAD_CONFIG, "%s.nodes: %s", where, ns ? "expected a non-empty array" : "missing (an array of nodes)");
    if (json_array_size(ns) > 100000) return hw_fail(err, HW_E_BAD_CONFIG, "%s.nodes: more than 100000 nodes", where);
    int n = (int)json_array_size(ns);
    g->nodes = calloc((size_t)n, sizeof(pl_node));
    if (!g->nodes) abort();
    g->n = n;
    for (int i = 0; i < n; i++) {
        json_t *o = json_array_get(ns, (size_t)i);
        pl_node *d = &g->nodes[i];
        char p[192];
        snprintf(p, sizeof p, "%s.nodes[%d]", where, i);
        if (!json_is_object(o)) goto fail_obj;
        if (check_keys(o, nk, p, err)) goto fail;
        const char *nm;
        if (jstr(o, "name", 1, p, &nm, err)) goto fail;
        if (!*nm || strlen(nm) >= sizeof d->name) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s.name: must be 1..%zu characters", p, sizeof d->name - 1);
            goto fail;
        }
        for (int q = 0; q < i; q++)
            if (strcmp(g->nodes[q].name, nm) == 0) {
                hw_fail(err, HW_E_BAD_CONFIG, "%s.name: duplicate node name '%s' (also nodes[%d])", p, nm, q);
                goto fail;
            }
        snprintf(d->name, sizeof d->name, "%s", nm);
        if (op_from_json(jget(o, "op"), p, &d->op, err)) goto fail;
        static const int64_t k11[2] = {1, 1};
        int64_t kern[2], v;
        if (jint_array(o, "ifm", 3, 1, NULL, 1, 1LL << 31, p, d->ifm, err) ||
            jint_array(o, "ofm", 3, 1, NULL, 1, 1LL << 31, p, d->ofm, err) ||
            jint(o, "weights", 0, 0, 1LL << 40, p, &d->weights, err) ||
            jint_array(o, "kernel", 2, 0, k11, 0, 1 << 16, p, kern, err))
            goto fail;
        d->kx = (int)kern[0];
        d->ky = (int)kern[1];
        if (jint(o, "groups", 1, 0, 1 << 24, p, &v, err)) goto fail;
        d->groups = (int)v;
        if (jint(o, "stride", 1, 0, 1 << 16, p, &v, err)) goto fail;
        d->stride = (int)v;
        if (jint(o, "pad", 0, 0, 1 << 16, p, &v, err)) goto fail;
        d->pad = (int)v;
        if (jint(o, "dilation", 1, 0, 1 << 16, p, &v, err)) goto fail;
        d->dilation = (int)v;
        if (jint(o, "batch", 1, 1, 1 << 20, p, &v, err)) goto fail;
        d->batch = (int)v;
        int64_t def_ops = d->ofm[0] * d->ofm[1] * d->ofm[2] * d->batch;
        if (jint(o, "ops", def_ops, 0, 1LL << 50, p, &d->ops, err)) goto fail;
        json_t *in = jget(o, "inputs");
        if (in && !json_is_array(in)) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s.inputs: expected an array of node names or indices", p);
            goto fail;
        }
        size_t nin = in ? json_array_size(in) : 0;
        if (nin > PL_MAX_IN) {
            hw_fail(err, HW_E_BAD_CONFIG, "%s.inputs: %zu inputs, at most %d", p, nin, PL_MAX_IN);
            goto fail;
        }
        if (nin == 0) {
            d->n_in = 1;
            d->in[0] = -1;
        }
        for (size_t k = 0; k < nin; k++) {
            json_t *e = json_array_get(in, k);
            int src = -2;
            if (json_is_integer(e)) {
                json_int_t x = json_integer_value(e);
                if (x >= -1 && x < i) src = (int)x;
            } else if (json_is_string(e)) {
                if (strcmp(json_string_value(e), "input") == 0) src = -1;
                for (int q = 0; q < i; q++)
                    if (strcmp(g->nodes[q].name, json_string_value(e)) == 0) src = q;
            }
            if (src < -1) {
                char txt[96];
                if (json_is_string(e)) snprintf(txt, sizeof txt, "'%s'", json_string_value(e));
                else if (json_is_integer(e)) snprintf(txt, sizeof txt, "%lld", (long long)json_integer_value(e));
                else snprintf(txt, sizeof txt, "(not a name or index)");
                hw_fail(err, HW_E_BAD_CONFIG,
                        "%s.inputs[%zu]: %s is not an earlier node (nodes are listed in execution order; "
                        "\"input\" or -1 is the graph input)",
                        p, k, txt);
                goto fail;
            }
            d->in[d->n_in++] = src;
        }
        continue;
    fail_obj:
        hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", p);
    fail:
        pl_graph_free(g);
        return -1;
    }
    return 0;
}

int pl_graph_from_hw_model(const hw_model *zm, pl_graph *g, hw_err *err) {
    memset(g, 0, sizeof *g);
    if (zm->n <= 0) return hw_fail(err, HW_E_BAD_CONFIG, "model '%s': no layers", zm->name);
    g->n = zm->n;
    g->nodes = calloc((size_t)zm->n, sizeof(pl_node));
    if (!g->nodes) abort();
    snprintf(g->name, sizeof g->name, "%s", zm->name);
    for (int i = 0; i < zm->n; i++) {
        const hw_layer *l = &zm->layers[i];
        pl_node *d = &g->nodes[i];
        snprintf(d->name, sizeof d->name, "%s", l->name);
        d->op = (int)l->op;
        d->ifm[0] = l->X;
        d->ifm[1] = l->Y;
        d->ifm[2] = l->C;
        d->ofm[0] = l->Xo;
        d->ofm[1] = l->Yo;
        d->ofm[2] = l->K;
        d->batch = l->N > 0 ? l->N : 1;
        d->weights = hw_layer_weight_elems(l);
        d->ops = hw_layer_ops(l);
        d->groups = l->groups;
        d->kx = l->S;
        d->ky = l->R;
        d->stride = l->stride;
        d->pad = l->pad;
        d->dilation = l->dilation;
        d->n_in = l->n_in;
        for (int k = 0; k < l->n_in && k < HW_LAYER_MAX_IN; k++) {
            int src = l->in[k];
            if (src >= i || src < -1) {
                pl_graph_free(g);
                return hw_fail(err, HW_E_BAD_CONFIG, "model '%s' layer %d '%s': input %d is not an earlier layer",
                               zm->name, i, l->name, src);
            }
            d->in[k] = src;
        }
        if (d->n_in == 0) {
            d->n_in = 1;
            d->in[0] = -1;
        }
    }
    return 0;
}

int pl_graph_from_zoo(const char *name, pl_graph *g, hw_err *err) {
    memset(g, 0, sizeof *g);
    const hw_model *zm = hw_zoo_find(name);
    if (!zm) {
        char known[512] = "";
        for (int i = 0; i < hw_zoo_count(); i++) {
            if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, hw_zoo_at(i)->name, sizeof known - strlen(known) - 1);
        }
        return hw_fail(err, HW_E_BAD_CONFIG, "config.workload: unknown model '%s' (known: %s)", name, known);
    }
    return pl_graph_from_hw_model(zm, g, err);
}

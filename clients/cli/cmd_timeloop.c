/* cmd_timeloop.c - `hwgym timeloop-model ARCH.yaml PROBLEM.yaml MAP.yaml ERT.yaml`: a drop-in for
 * Timeloop's model on the features the sched-v0 Timeloop files use (docs/sched.md
 * "hwgym timeloop-model"): storage levels with entries, instances, meshX, shared_bandwidth,
 * technology DRAM and energy-per-ingress; the grouped-CNN problem shape; temporal and spatial
 * factors with permutations and the X/Y split; keep/bypass; an inline ERT. The counting is
 * envs/sched/sched_tl.c. Prints the summary as JSON on stdout and writes a stats file laid out
 * like Timeloop's (timeloop-model.stats.txt, tl_stats.c). Anything else is refused by name. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sched/sched_tl.h"
#include "tl_stats.h"
#include "tl_yaml.h"

int hwcli_timeloop_model(int argc, char **argv);

static const char *usage =
    "usage: hwgym timeloop-model ARCH.yaml PROBLEM.yaml MAP.yaml ERT.yaml [-o DIR] [--stats FILE]\n"
    "Evaluates one mapping as Timeloop's timeloop-model (v3 semantics) does and prints energy,\n"
    "cycles, utilisation and per-level per-tensor reads, fills and updates as JSON; writes\n"
    "DIR/timeloop-model.stats.txt (or --stats FILE) laid out like Timeloop's stats. Supported:\n"
    "storage levels (entries, instances, meshX, shared_bandwidth, technology: DRAM,\n"
    "energy-per-ingress), the grouped-CNN problem (B C G K R S P Q, Hstride = Wstride), temporal\n"
    "and spatial factors with permutation and split, datatype keep/bypass, an ERT with\n"
    "read/write/update and mac_random energies. Exit 0 when the mapping is valid, 1 when\n"
    "Timeloop would reject it (reason in the JSON), 2 on bad input.\n";

static const char *const dsname[SCHED_NT] = {"Inputs", "Weights", "Outputs"};

static int num(const json_t *v, const char *where, double *out, hw_err *err) {
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        char *end;
        errno = 0;
        double x = strtod(json_string_value(v), &end);
        if (end != json_string_value(v) && !*end && !errno) {
            *out = x;
            return 0;
        }
    }
    return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a number", where);
}

/* A whole number in [lo, hi] (a count: instances, meshX, entries, word-bits, ...): a value that
 * would wrap or truncate when the model uses it is refused, naming the field (issue 28). */
static int num_int(const json_t *v, const char *where, double lo, double hi, double *out, hw_err *err) {
    double x;
    if (num(v, where, &x, err)) return -1;
    if (!(x >= lo && x <= hi) || x != floor(x)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a whole number in [%.0f, %.0f], got %s", where, lo, hi,
                                                              json_is_string(v) ? json_string_value(v) : "a number out of range");
    *out = x;
    return 0;
}

#define TL_MAX_COUNT 2147483647.0 /* instances, meshX: an int */

static int dim_of(const char *s, size_t n) {
    for (int d = 0; d < SCHED_NDIM; d++)
        if (n == 1 && s[0] == sched_dim_names[d][0]) return d;
    return -1;
}

static int ds_of(const char *s) {
    for (int t = 0; t < SCHED_NT; t++)
        if (!strcmp(s, dsname[t])) return t;
    return -1;
}

/* ------------------------------------------------------------------ architecture */

static int parse_arch(const json_t *root, const char *path, tl_spec *s, hw_err *err) {
    const json_t *arch = json_object_get(root, "arch");
    if (!json_is_object(arch)) {
        if (json_object_get(root, "architecture"))
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: the v0.4 'architecture' tree is not supported (use arch: arithmetic/storage)", path);
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a top-level 'arch' with 'arithmetic' and 'storage'", path);
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)arch, k, v) if (strcmp(k, "arithmetic") && strcmp(k, "storage") && strcmp(k, "version"))
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.%s: unsupported architecture feature", path, k);
    const json_t *ar = json_object_get(arch, "arithmetic");
    if (!json_is_object(ar)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.arithmetic: expected a mapping", path);
    s->mac_meshx = 1;
    json_object_foreach((json_t *)ar, k, v) {
        char w[128];
        snprintf(w, sizeof w, "%s: arch.arithmetic.%s", path, k);
        double wb;
        if (!strcmp(k, "instances")) {
            if (num_int(v, w, 1, TL_MAX_COUNT, &s->mac_instances, err)) return -1;
        } else if (!strcmp(k, "meshX")) {
            if (num_int(v, w, 1, TL_MAX_COUNT, &s->mac_meshx, err)) return -1;
        } else if (!strcmp(k, "word-bits") || !strcmp(k, "datawidth")) {
            if (num_int(v, w, 1, 1024, &wb, err)) return -1;
        } else if (strcmp(k, "name"))
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: unsupported arithmetic feature", w);
    }
    if (!(s->mac_instances >= 1)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.arithmetic.instances: required, >= 1", path);
    const json_t *st = json_object_get(arch, "storage");
    if (!json_is_array(st) || json_array_size(st) < 1 || json_array_size(st) > TL_MAXLV)
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.storage: expected a list of 1..%d levels, innermost first", path, TL_MAXLV);
    s->nl = (int)json_array_size(st);
    for (int i = 0; i < s->nl; i++) {
        tl_level *lv = &s->lv[i];
        memset(lv, 0, sizeof *lv);
        lv->row = -1;
        lv->entries = -1;
        lv->instances = 1;
        lv->meshx = 1;
        for (int d = 0; d < SCHED_NDIM; d++) lv->tf[d] = lv->sf[d] = 1, lv->tperm[d] = d;
        for (int t = 0; t < SCHED_NT; t++) lv->keep[t] = 1;
        const json_t *o = json_array_get(st, (size_t)i);
        if (!json_is_object(o)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.storage[%d]: expected a mapping", path, i);
        const json_t *nm = json_object_get(o, "name");
        if (!json_is_string(nm)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.storage[%d].name: required", path, i);
        snprintf(lv->name, sizeof lv->name, "%s", json_string_value(nm));
        json_object_foreach((json_t *)o, k, v) {
            char w[160];
            snprintf(w, sizeof w, "%s: arch.storage[%d] (%s).%s", path, i, lv->name, k);
            double x = 0;
            if (!strcmp(k, "name")) continue;
            if (!strcmp(k, "technology")) {
                if (!json_is_string(v)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a string", w);
                lv->dram = !strcmp(json_string_value(v), "DRAM");
                if (!lv->dram && strcmp(json_string_value(v), "SRAM"))
                    return hw_fail(err, HW_E_BAD_CONFIG, "%s: unsupported technology '%s' (DRAM or SRAM)", w, json_string_value(v));
                continue;
            }
            bool count = !strcmp(k, "instances") || !strcmp(k, "meshX");
            if (count ? num_int(v, w, 1, TL_MAX_COUNT, &x, err)
                : !strcmp(k, "entries") || !strcmp(k, "depth") ? num_int(v, w, 0, 9007199254740992.0, &x, err)
                : !strcmp(k, "word-bits") ? num_int(v, w, 1, 1024, &x, err)
                                          : num(v, w, &x, err))
                return -1;
            if ((!strcmp(k, "shared_bandwidth") || !strcmp(k, "energy-per-ingress")) && !(x >= 0 && isfinite(x)))
                return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a finite number >= 0", w);
            if (!strcmp(k, "entries") || !strcmp(k, "depth")) lv->entries = x;
            else if (!strcmp(k, "instances")) lv->instances = x;
            else if (!strcmp(k, "meshX")) lv->meshx = x;
            else if (!strcmp(k, "shared_bandwidth")) lv->bw = x;
            else if (!strcmp(k, "energy-per-ingress")) lv->e_ingress = x;
            else if (!strcmp(k, "word-bits")) continue;
            else if (!strcmp(k, "block-size")) {
                if (x != 1) return hw_fail(err, HW_E_BAD_CONFIG, "%s: block-size %g is not supported (1 only)", w, x);
            } else if (!strcmp(k, "addr-gen-energy") || !strcmp(k, "energy-per-hop") || !strcmp(k, "router-energy")) {
                if (x != 0) return hw_fail(err, HW_E_BAD_CONFIG, "%s: nonzero %s is not supported", w, k);
            } else return hw_fail(err, HW_E_BAD_CONFIG, "%s: unsupported storage feature", w);
        }
        if (!lv->dram && lv->entries < 0)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.storage[%d] (%s): entries required for an SRAM level", path, i, lv->name);
        if (lv->dram) lv->entries = -1;
        if (!(lv->instances >= 1) || !(lv->meshx >= 1) || fmod(lv->instances, lv->meshx) != 0)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: arch.storage[%d] (%s): instances must be a multiple of meshX", path, i,
                           lv->name);
    }
    return 0;
}

/* ------------------------------------------------------------------ problem */

static int parse_problem(const json_t *root, const char *path, tl_spec *s, hw_err *err) {
    const json_t *pr = json_object_get(root, "problem");
    if (!json_is_object(pr)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a top-level 'problem'", path);
    const json_t *shape = json_object_get(pr, "shape");
    if (shape) {
        const json_t *dims = json_object_get(shape, "dimensions");
        if (!json_is_array(dims) || json_array_size(dims) != SCHED_NDIM)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.shape.dimensions: only the grouped-CNN shape [B,C,G,K,R,S,P,Q] is supported", path);
        unsigned seen = 0;
        for (size_t i = 0; i < SCHED_NDIM; i++) {
            const json_t *d = json_array_get(dims, i);
            int x = json_is_string(d) ? dim_of(json_string_value(d), strlen(json_string_value(d))) : -1;
            if (x < 0 || (seen & (1u << x)))
                return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.shape.dimensions: unsupported dimension (B C G K R S P Q only)", path);
            seen |= 1u << x;
        }
        const json_t *ds = json_object_get(shape, "data-spaces");
        if (!json_is_array(ds) || json_array_size(ds) != SCHED_NT)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.shape.data-spaces: Weights, Inputs, Outputs expected", path);
        for (size_t i = 0; i < SCHED_NT; i++) {
            const json_t *n = json_object_get(json_array_get(ds, i), "name");
            if (!json_is_string(n) || ds_of(json_string_value(n)) < 0)
                return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.shape.data-spaces[%zu]: unsupported data space", path, i);
            const json_t *pj = json_object_get(json_array_get(ds, i), "projection");
            if (!json_is_array(pj) || json_array_size(pj) != 5)
                return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.shape.data-spaces[%zu] (%s): unsupported projection", path, i,
                               json_string_value(n));
        }
    }
    const json_t *in = json_object_get(pr, "instance");
    if (!json_is_object(in)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.instance: required", path);
    double hs = 1, ws = 1;
    for (int d = 0; d < SCHED_NDIM; d++) s->dims[d] = 1;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)in, k, v) {
        char w[128];
        snprintf(w, sizeof w, "%s: problem.instance.%s", path, k);
        double x;
        if (num(v, w, &x, err)) return -1;
        int d = dim_of(k, strlen(k));
        if (d >= 0) {
            if (!(x >= 1) || x != floor(x) || x > 1e8) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a positive integer", w);
            s->dims[d] = (int)x;
        } else if (!strcmp(k, "Hstride")) hs = x;
        else if (!strcmp(k, "Wstride")) ws = x;
        else if (!strcmp(k, "Hdilation") || !strcmp(k, "Wdilation")) {
            if (x != 1) return hw_fail(err, HW_E_BAD_CONFIG, "%s: dilation other than 1 is not supported", w);
        } else return hw_fail(err, HW_E_BAD_CONFIG, "%s: unsupported problem parameter", w);
    }
    if (hs != ws || hs < 1 || hs != floor(hs))
        return hw_fail(err, HW_E_BAD_CONFIG, "%s: problem.instance: Hstride %g != Wstride %g is not supported", path, hs, ws);
    s->stride = (int)hs;
    return 0;
}

/* ------------------------------------------------------------------ mapping */

static int level_of(const tl_spec *s, const char *name) {
    for (int i = 0; i < s->nl; i++)
        if (!strcmp(s->lv[i].name, name)) return i;
    return -1;
}

static int parse_factors(const char *txt, int *f, const char *w, hw_err *err) {
    const char *p = txt;
    unsigned seen = 0;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        int d = dim_of(p, 1);
        char *end = (char *)p + 1;
        errno = 0;
        long x = d >= 0 ? strtol(p + 1, &end, 10) : 0;
        if (d < 0 || end == p + 1 || x < 1)
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: factors: expected 'B1 C2 ...' (dimension letter, positive integer)", w);
        if (errno == ERANGE || x > 100000000) /* K99999999999999999999999 wrapped to a negative product (issue 28) */
            return hw_fail(err, HW_E_BAD_CONFIG, "%s: factors: %c%.*s is above the limit of 100000000", w, p[0], (int)(end - p - 1 > 24 ? 24 : end - p - 1), p + 1);
        if (seen & (1u << d)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: factors: %c given twice", w, p[0]);
        seen |= 1u << d;
        f[d] = (int)x;
        p = end;
    }
    return 0;
}

static int parse_perm(const char *txt, int *perm, const char *w, hw_err *err) {
    unsigned char o[SCHED_NDIM];
    char buf[SCHED_NDIM + 1];
    size_t n = 0;
    for (const char *p = txt; *p && n < SCHED_NDIM + 1; p++)
        if (*p != ' ') buf[n++] = *p;
    if (n > SCHED_NDIM) return hw_fail(err, HW_E_BAD_CONFIG, "%s: permutation: more than 8 dimensions", w);
    /* a partial permutation lists the innermost loops; the rest follow in B C G K R S P Q order */
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        int d = dim_of(&buf[i], 1);
        if (d < 0 || (seen & (1u << d))) return hw_fail(err, HW_E_BAD_CONFIG, "%s: permutation: bad or repeated dimension", w);
        seen |= 1u << d;
        o[i] = (unsigned char)d;
    }
    for (int d = 0; d < SCHED_NDIM; d++)
        if (!(seen & (1u << d))) o[n++] = (unsigned char)d;
    for (int i = 0; i < SCHED_NDIM; i++) perm[i] = o[i];
    return 0;
}

static int ds_list(const json_t *a, int *flags, int val, const char *w, hw_err *err) {
    if (!a) return 0;
    if (!json_is_array(a)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a list of data spaces", w);
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        int t = json_is_string(x) ? ds_of(json_string_value(x)) : -1;
        if (t < 0) return hw_fail(err, HW_E_BAD_CONFIG, "%s[%zu]: unknown data space (Inputs, Weights, Outputs)", w, i);
        flags[t] = val;
    }
    return 0;
}

static int parse_map(const json_t *root, const char *path, tl_spec *s, hw_err *err) {
    const json_t *m = json_object_get(root, "mapping");
    if (!json_is_array(m)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected a top-level 'mapping' list", path);
    size_t i;
    json_t *e;
    json_array_foreach(m, i, e) {
        char w[160];
        const char *tg = json_string_value(json_object_get(e, "target"));
        const char *ty = json_string_value(json_object_get(e, "type"));
        snprintf(w, sizeof w, "%s: mapping[%zu]", path, i);
        if (!tg || !ty) return hw_fail(err, HW_E_BAD_CONFIG, "%s: 'target' and 'type' required", w);
        int l = level_of(s, tg);
        if (l < 0) return hw_fail(err, HW_E_BAD_CONFIG, "%s: target '%s' is not a storage level of the architecture", w, tg);
        snprintf(w, sizeof w, "%s: mapping[%zu] (%s %s)", path, i, tg, ty);
        tl_level *lv = &s->lv[l];
        const char *k;
        json_t *v;
        json_object_foreach(e, k, v) {
            static const char *const ok[] = {"target", "type", "factors", "permutation", "split", "keep", "bypass", NULL};
            int known = 0;
            for (int q = 0; ok[q]; q++)
                if (!strcmp(k, ok[q])) known = 1;
            if (!known) return hw_fail(err, HW_E_BAD_CONFIG, "%s: '%s' is not supported", w, k);
        }
        if (!strcmp(ty, "temporal") || !strcmp(ty, "spatial")) {
            int spatial = ty[0] == 's';
            int *f = spatial ? lv->sf : lv->tf;
            const char *ft = json_string_value(json_object_get(e, "factors"));
            if (ft && parse_factors(ft, f, w, err)) return -1;
            int perm[SCHED_NDIM];
            const char *pt = json_string_value(json_object_get(e, "permutation"));
            if (parse_perm(pt ? pt : "", perm, w, err)) return -1;
            if (!spatial) memcpy(lv->tperm, perm, sizeof perm);
            else {
                double split = SCHED_NDIM;
                const json_t *sp = json_object_get(e, "split");
                if (sp && num_int(sp, w, 0, SCHED_NDIM, &split, err)) return -1;
                for (int q = 0; q < SCHED_NDIM; q++) lv->saxis[perm[q]] = q >= split;
            }
        } else if (!strcmp(ty, "datatype") || !strcmp(ty, "bypass")) {
            if (ds_list(json_object_get(e, "keep"), lv->keep, 1, w, err) ||
                ds_list(json_object_get(e, "bypass"), lv->keep, 0, w, err))
                return -1;
        } else return hw_fail(err, HW_E_BAD_CONFIG, "%s: mapping type '%s' is not supported", w, ty);
    }
    return 0;
}

/* ------------------------------------------------------------------ ERT */

static int parse_ert(const json_t *root, const char *path, tl_spec *s, hw_err *err) {
    const json_t *ert = json_object_get(root, "ERT");
    const json_t *tabs = ert ? json_object_get(ert, "tables") : NULL;
    if (!json_is_array(tabs)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected ERT.tables", path);
    size_t i;
    json_t *t;
    json_array_foreach(tabs, i, t) {
        const char *nm = json_string_value(json_object_get(t, "name"));
        if (!nm) return hw_fail(err, HW_E_BAD_CONFIG, "%s: ERT.tables[%zu].name: required", path, i);
        const char *dot = strrchr(nm, '.');
        const char *base = dot ? dot + 1 : nm;
        int l = level_of(s, base);
        int mac = l < 0 && !strcmp(base, "MAC");
        if (l < 0 && !mac) return hw_fail(err, HW_E_BAD_CONFIG, "%s: ERT table '%s' names no level of the architecture", path, nm);
        const json_t *acts = json_object_get(t, "actions");
        size_t j;
        json_t *a;
        json_array_foreach(acts, j, a) {
            const char *an = json_string_value(json_object_get(a, "name"));
            char w[200];
            snprintf(w, sizeof w, "%s: ERT %s action %s energy", path, nm, an ? an : "?");
            double x;
            if (!an || num(json_object_get(a, "energy"), w, &x, err)) return -1;
            if (mac && !strcmp(an, "mac_random")) s->e_mac = x;
            else if (!mac && !strcmp(an, "read")) s->lv[l].e_read = x;
            else if (!mac && !strcmp(an, "write")) s->lv[l].e_fill = x;
            else if (!mac && !strcmp(an, "update")) s->lv[l].e_update = x;
            else if (x != 0) return hw_fail(err, HW_E_BAD_CONFIG, "%s: nonzero energy for this action is not supported", w);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ output */

static json_t *result_json(const tl_spec *s, const tl_result *r) {
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string("ok"));
    json_object_set_new(o, "energy_pj", json_real(r->energy));
    json_object_set_new(o, "energy_uj", json_real(r->energy / 1e6));
    json_object_set_new(o, "cycles", json_real(r->cycles));
    json_object_set_new(o, "compute_cycles", json_real(r->compute_cycles));
    json_object_set_new(o, "utilization", json_real(r->utilization));
    json_object_set_new(o, "spatial_utilization", json_real(r->spatial_util));
    json_object_set_new(o, "computes", json_real(r->macs));
    json_object_set_new(o, "pj_per_compute", json_real(r->energy / r->macs));
    json_object_set_new(o, "bound", json_string(r->bound < 0 ? "compute" : s->lv[r->bound].name));
    json_object_set_new(o, "mac_energy_pj", json_real(r->e_mac_total));
    json_t *lvls = json_array();
    for (int l = 0; l < s->nl; l++) {
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(s->lv[l].name));
        json_object_set_new(x, "utilized_instances", json_real(r->inst_used[l]));
        json_object_set_new(x, "energy_pj", json_real(r->e_level[l]));
        json_object_set_new(x, "network_energy_pj", json_real(r->e_net[l]));
        json_object_set_new(x, "cycles", json_real(r->level_cycles[l]));
        json_t *ts = json_object();
        for (int t = 0; t < SCHED_NT; t++) {
            if (!s->lv[l].keep[t]) continue;
            json_t *c = json_object();
            json_object_set_new(c, "reads", json_real(r->reads[l][t]));
            json_object_set_new(c, "fills", json_real(r->fills[l][t]));
            json_object_set_new(c, "updates", json_real(r->updates[l][t]));
            json_object_set_new(c, "tile", json_real(r->tile[l][t]));
            json_object_set_new(ts, dsname[t], c);
        }
        json_object_set_new(x, "tensors", ts);
        json_array_append_new(lvls, x);
    }
    json_object_set_new(o, "levels", lvls);
    return o;
}

int hwcli_timeloop_model(int argc, char **argv) {
    const char *outdir = NULL, *stats = NULL;
    const hwcli_opt opts[] = {{"-o", &outdir, NULL}, {"--out-dir", &outdir, NULL}, {"--stats", &stats, NULL}, {NULL, NULL, NULL}};
    const char *pos[4];
    int npos = 0;
    int rc = hwcli_parse(argc, argv, opts, pos, 4, 4, &npos, usage);
    if (rc) return rc == 1 ? 0 : 2;
    static tl_spec s;
    memset(&s, 0, sizeof s);
    hw_err err;
    const char *what[4] = {"ARCH", "PROBLEM", "MAP", "ERT"};
    json_t *doc[4] = {NULL, NULL, NULL, NULL};
    int bad = 0;
    for (int i = 0; i < 4 && !bad; i++) {
        doc[i] = tl_yaml_load(pos[i], &err);
        if (!doc[i]) bad = 1;
    }
    if (!bad && (parse_arch(doc[0], pos[0], &s, &err) || parse_problem(doc[1], pos[1], &s, &err) ||
                 parse_map(doc[2], pos[2], &s, &err) || parse_ert(doc[3], pos[3], &s, &err)))
        bad = 1;
    (void)what;
    for (int i = 0; i < 4; i++) json_decref(doc[i]);
    if (bad) return hwcli_fail("timeloop-model", 2, "%s", err.msg);
    tl_result r;
    memset(&r, 0, sizeof r);
    int cls = tl_check(&s, &r);
    if (cls != TL_OK) {
        json_t *o = json_object();
        json_object_set_new(o, "status", json_string("rejected"));
        json_object_set_new(o, "class", json_string(cls == TL_ECAPACITY ? "capacity" : cls == TL_ESPATIAL ? "spatial" : "factors"));
        json_object_set_new(o, "level", json_string(r.fail_level >= 0 ? s.lv[r.fail_level].name : cls == TL_ESPATIAL ? "MAC" : ""));
        char msg[260];
        snprintf(msg, sizeof msg, "ERROR: %s", r.reason);
        json_object_set_new(o, "reason", json_string(msg));
        hwcli_print_json(o);
        json_decref(o);
        fprintf(stderr, "hwgym timeloop-model: %s\n", msg);
        return 1;
    }
    tl_eval(&s, &r);
    char path[1024];
    if (stats) snprintf(path, sizeof path, "%s", stats);
    else snprintf(path, sizeof path, "%s%stimeloop-model.stats.txt", outdir ? outdir : "", outdir ? "/" : "");
    FILE *f = fopen(path, "w");
    if (!f) return hwcli_fail("timeloop-model", 1, "cannot write the stats file %s", path);
    tl_stats_write(f, &s, &r);
    if (fclose(f)) return hwcli_fail("timeloop-model", 1, "cannot write the stats file %s", path);
    json_t *o = result_json(&s, &r);
    json_object_set_new(o, "stats_file", json_string(path));
    hwcli_print_json(o);
    json_decref(o);
    return 0;
}

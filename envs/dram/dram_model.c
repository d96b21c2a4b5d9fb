/* dram_model.c - memspecs, address maps, traces and generators (see dram_model.h). */
#include "dram_model.h"

#include <ctype.h>
#include <gsl/gsl_rng.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hw_files.h"

/* Built-in memspecs, DRAMSys JSON format. Values are the JEDEC/Micron datasheet figures used
 * by the reference runs (DDR4) and by ArchGym's DRAM-Gym (DDR3). Written for hwgym. */
static const char ddr4_2400_json[] =
    "{\"memspec\":{"
    "\"memoryId\":\"JEDEC_4Gb_DDR4-2400_8bit_A\",\"memoryType\":\"DDR4\","
    "\"memarchitecturespec\":{\"burstLength\":8,\"dataRate\":2,\"nbrOfBankGroups\":4,\"nbrOfBanks\":16,"
    "\"nbrOfColumns\":1024,\"nbrOfRanks\":1,\"nbrOfRows\":32768,\"width\":8,\"nbrOfDevices\":8,\"nbrOfChannels\":1},"
    "\"mempowerspec\":{\"idd0\":60.75,\"idd02\":4.05,\"idd2n\":38.25,\"idd3n\":44.0,\"idd4r\":184.5,"
    "\"idd4w\":168.75,\"idd5\":118.0,\"idd6\":20.25,\"vdd\":1.2,\"vdd2\":2.5},"
    "\"memtimingspec\":{\"AL\":0,\"CCD_L\":6,\"CCD_S\":4,\"CL\":16,\"FAW\":26,\"RAS\":39,\"RC\":55,\"RCD\":16,"
    "\"REFI\":9360,\"RFC\":312,\"RL\":16,\"RPRE\":1,\"RP\":16,\"RRD_L\":6,\"RRD_S\":4,\"RTP\":12,\"WL\":16,"
    "\"WPRE\":1,\"WR\":18,\"WTR_L\":9,\"WTR_S\":3,\"RTRS\":1,\"tCK\":833}}}";

static const char ddr3_1600_json[] =
    "{\"memspec\":{"
    "\"memoryId\":\"MICRON_1Gb_DDR3-1600_8bit_G\",\"memoryType\":\"DDR3\","
    "\"memarchitecturespec\":{\"burstLength\":8,\"dataRate\":2,\"nbrOfBanks\":8,\"nbrOfColumns\":1024,"
    "\"nbrOfRanks\":1,\"nbrOfRows\":16384,\"width\":8,\"nbrOfDevices\":8,\"nbrOfChannels\":1},"
    "\"mempowerspec\":{\"idd0\":70.0,\"idd2n\":45.0,\"idd3n\":45.0,\"idd4r\":140.0,\"idd4w\":145.0,"
    "\"idd5\":170.0,\"vdd\":1.5},"
    "\"memtimingspec\":{\"AL\":0,\"CCD\":4,\"CL\":10,\"FAW\":24,\"RAS\":28,\"RC\":38,\"RCD\":10,\"REFI\":6240,"
    "\"RFC\":88,\"RL\":10,\"RP\":10,\"RRD\":5,\"RTP\":6,\"WL\":8,\"WR\":12,\"WTR\":6,\"RTRS\":1,\"tCK\":1250}}}";

const char *const dram_builtin_memspec_names[] = {"DDR4-2400", "DDR3-1600", NULL};

const char *dram_builtin_memspec_json(const char *name) {
    if (!name) return NULL;
    if (!strcmp(name, "DDR4-2400") || !strcmp(name, "JEDEC_4Gb_DDR4-2400_8bit_A")) return ddr4_2400_json;
    if (!strcmp(name, "DDR3-1600") || !strcmp(name, "MICRON_1Gb_DDR3-1600_8bit_G")) return ddr3_1600_json;
    return NULL;
}

const char *const dram_pp_names[] = {"Open", "OpenAdaptive", "Closed", "ClosedAdaptive", NULL};
const char *const dram_sched_names[] = {"Fifo", "FrFcfs", "FrFcfsGrp", NULL};
const char *const dram_buf_names[] = {"Bankwise", "ReadWrite", "Shared", NULL};
const char *const dram_arb_names[] = {"Simple", "Fifo", "Reorder", NULL};
const char *const dram_resp_names[] = {"Fifo", "Reorder", NULL};
const char *const dram_ref_names[] = {"NoRefresh", "AllBank", NULL};
const char *const dram_cmd_names[] = {"ACT", "PREPB", "PREAB", "RD", "RDA", "WR", "WRA", "REFAB", NULL};

void dram_ctrl_default(dram_ctrl *c) {
    memset(c, 0, sizeof *c);
    c->page_policy = DRAM_PP_OPEN;
    c->scheduler = DRAM_SCHED_FRFCFS;
    c->sched_buffer = DRAM_BUF_BANKWISE;
    c->arbiter = DRAM_ARB_SIMPLE;
    c->resp_queue = DRAM_RESP_FIFO;
    c->refresh = DRAM_REF_ALLBANK;
    c->request_buffer_size = 8;
    c->max_active_transactions = 128;
    c->buffer_size_read = 8;
    c->buffer_size_write = 8;
    c->req_bytes = 64;
}

/* ---- memspec JSON ---- */

static int get_num(const json_t *o, const char *sec, const char *key, bool required, double def, double *out,
                   hw_err *err) {
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (required) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.%s.%s: missing", sec, key);
        *out = def;
        return 0;
    }
    if (!json_is_number(v)) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.%s.%s: expected a number", sec, key);
    *out = json_number_value(v);
    if (*out < 0) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.%s.%s: negative", sec, key);
    return 0;
}

static int get_int(const json_t *o, const char *sec, const char *key, bool required, int def, int *out, hw_err *err) {
    double d;
    if (get_num(o, sec, key, required, def, &d, err)) return -1;
    if (d != (double)(int)d) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.%s.%s: expected an integer", sec, key);
    *out = (int)d;
    return 0;
}

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
static int ilog2(int64_t v) {
    int k = 0;
    while ((1LL << k) < v) k++;
    return k;
}

int dram_memspec_from_json(const json_t *j, dram_memspec *ms, hw_err *err) {
    memset(ms, 0, sizeof *ms);
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_CONFIG, "memspec: expected an object");
    json_t *in = json_object_get(j, "memspec");
    if (in) j = in;
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_CONFIG, "memspec: expected an object");
    const char *type = json_string_value(json_object_get(j, "memoryType"));
    if (!type) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memoryType: missing");
    if (!strcmp(type, "DDR4")) ms->type = DRAM_DDR4;
    else if (!strcmp(type, "DDR3")) ms->type = DRAM_DDR3;
    else return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memoryType: '%s' not supported (DDR3, DDR4)", type);
    const char *id = json_string_value(json_object_get(j, "memoryId"));
    snprintf(ms->id, sizeof ms->id, "%s", id ? id : type);
    json_t *a = json_object_get(j, "memarchitecturespec"), *t = json_object_get(j, "memtimingspec"),
           *p = json_object_get(j, "mempowerspec");
    if (!json_is_object(a)) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec: missing");
    if (!json_is_object(t)) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memtimingspec: missing");
    if (!json_is_object(p)) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.mempowerspec: missing");
    const char *A = "memarchitecturespec", *T = "memtimingspec", *P = "mempowerspec";
    bool d4 = ms->type == DRAM_DDR4;
    if (get_int(a, A, "burstLength", true, 0, &ms->bl, err) || get_int(a, A, "dataRate", true, 0, &ms->data_rate, err) ||
        get_int(a, A, "nbrOfBankGroups", d4, 1, &ms->bank_groups, err) ||
        get_int(a, A, "nbrOfBanks", true, 0, &ms->banks, err) || get_int(a, A, "nbrOfColumns", true, 0, &ms->columns, err) ||
        get_int(a, A, "nbrOfRows", true, 0, &ms->rows, err) || get_int(a, A, "width", true, 0, &ms->width, err) ||
        get_int(a, A, "nbrOfDevices", false, 1, &ms->devices, err) ||
        get_int(a, A, "nbrOfRanks", false, 1, &ms->ranks, err))
        return -1;
    if (ms->ranks != 1) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec.nbrOfRanks: only 1 rank is modelled");
    if (!is_pow2(ms->banks) || ms->banks > 64) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec.nbrOfBanks: must be a power of two <= 64");
    if (!is_pow2(ms->bank_groups) || ms->banks % ms->bank_groups)
        return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec.nbrOfBankGroups: must be a power of two dividing nbrOfBanks");
    if (!is_pow2(ms->columns) || !is_pow2(ms->rows) || ms->rows > (1 << 30))
        return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec: nbrOfColumns and nbrOfRows must be powers of two");
    if (ms->bl < 2 || ms->data_rate < 1 || ms->bl % ms->data_rate)
        return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec.burstLength: must be a multiple of dataRate");
    if (!is_pow2((int64_t)ms->width * ms->devices) || ms->width * ms->devices < 8)
        return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memarchitecturespec.width: width x nbrOfDevices must be a power of two >= 8");
    if (get_int(t, T, "tCK", true, 0, &ms->tck_ps, err) || get_int(t, T, "CL", true, 0, &ms->CL, err) ||
        get_int(t, T, "WL", true, 0, &ms->WL, err) || get_int(t, T, "AL", false, 0, &ms->AL, err) ||
        get_int(t, T, "RCD", true, 0, &ms->RCD, err) || get_int(t, T, "RP", true, 0, &ms->RP, err) ||
        get_int(t, T, "RAS", true, 0, &ms->RAS, err) || get_int(t, T, "RC", true, 0, &ms->RC, err) ||
        get_int(t, T, "RTP", true, 0, &ms->RTP, err) || get_int(t, T, "WR", true, 0, &ms->WR, err) ||
        get_int(t, T, "FAW", true, 0, &ms->FAW, err) || get_int(t, T, "RFC", true, 0, &ms->RFC, err) ||
        get_int(t, T, "REFI", true, 0, &ms->REFI, err) || get_int(t, T, "WPRE", false, 1, &ms->WPRE, err) ||
        get_int(t, T, "RPRE", false, 1, &ms->RPRE, err) || get_int(t, T, "RTRS", false, 1, &ms->RTRS, err))
        return -1;
    if (d4) {
        if (get_int(t, T, "CCD_S", true, 0, &ms->CCD_S, err) || get_int(t, T, "CCD_L", true, 0, &ms->CCD_L, err) ||
            get_int(t, T, "RRD_S", true, 0, &ms->RRD_S, err) || get_int(t, T, "RRD_L", true, 0, &ms->RRD_L, err) ||
            get_int(t, T, "WTR_S", true, 0, &ms->WTR_S, err) || get_int(t, T, "WTR_L", true, 0, &ms->WTR_L, err))
            return -1;
    } else {
        if (get_int(t, T, "CCD", true, 0, &ms->CCD_S, err) || get_int(t, T, "RRD", true, 0, &ms->RRD_S, err) ||
            get_int(t, T, "WTR", true, 0, &ms->WTR_S, err))
            return -1;
        ms->CCD_L = ms->CCD_S;
        ms->RRD_L = ms->RRD_S;
        ms->WTR_L = ms->WTR_S;
        ms->bank_groups = 1;
    }
    if (ms->tck_ps <= 0) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memtimingspec.tCK: must be > 0 (ps)");
    if (ms->REFI <= ms->RFC) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memtimingspec.REFI: must exceed RFC");
    if (ms->RC < ms->RAS) return hw_fail(err, HW_E_BAD_CONFIG, "memspec.memtimingspec.RC: must be >= RAS");
    if (get_num(p, P, "idd0", true, 0, &ms->idd0, err) || get_num(p, P, "idd2n", true, 0, &ms->idd2n, err) ||
        get_num(p, P, "idd3n", true, 0, &ms->idd3n, err) || get_num(p, P, "idd4r", true, 0, &ms->idd4r, err) ||
        get_num(p, P, "idd4w", true, 0, &ms->idd4w, err) || get_num(p, P, "idd5", true, 0, &ms->idd5, err) ||
        get_num(p, P, "vdd", true, 0, &ms->vdd, err) || get_num(p, P, "idd02", false, 0, &ms->ipp0, err) ||
        get_num(p, P, "vdd2", false, 0, &ms->vpp, err))
        return -1;
    return 0;
}

int dram_memspec_builtin(const char *name, dram_memspec *ms, hw_err *err) {
    const char *txt = dram_builtin_memspec_json(name);
    if (!txt) return hw_fail(err, HW_E_BAD_CONFIG, "memspec: unknown built-in '%s' (DDR4-2400, DDR3-1600)", name ? name : "");
    json_t *j = json_loads(txt, 0, NULL);
    if (!j) return hw_fail(err, HW_E_INTERNAL, "memspec: built-in '%s' does not parse", name);
    int rc = dram_memspec_from_json(j, ms, err);
    json_decref(j);
    return rc;
}

/* ---- address mapping ---- */

void dram_addrmap_default(const dram_memspec *ms, dram_addrmap *am) {
    memset(am, 0, sizeof *am);
    int bit = ilog2((int64_t)ms->width * ms->devices / 8);
    am->n_col = ilog2(ms->columns);
    for (int i = 0; i < am->n_col; i++) am->col[i] = (uint8_t)bit++;
    am->n_bg = ilog2(ms->bank_groups);
    for (int i = 0; i < am->n_bg; i++) am->bg[i] = (uint8_t)bit++;
    am->n_bank = ilog2(ms->banks / ms->bank_groups);
    for (int i = 0; i < am->n_bank; i++) am->bank[i] = (uint8_t)bit++;
    am->n_row = ilog2(ms->rows);
    for (int i = 0; i < am->n_row; i++) am->row[i] = (uint8_t)bit++;
    am->n_rank = ilog2(ms->ranks);
    for (int i = 0; i < am->n_rank; i++) am->rank[i] = (uint8_t)bit++;
}

static int read_bits(const json_t *o, const char *key, int want, int maxn, uint8_t *dst, int *n, uint64_t *used,
                     hw_err *err) {
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (want == 0) {
            *n = 0;
            return 0;
        }
        return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s: missing (the memspec needs %d bits)", key, want);
    }
    if (!json_is_array(v)) return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s: expected an array of bit numbers", key);
    int cnt = (int)json_array_size(v);
    if (want >= 0 && cnt != want)
        return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s: %d bits, the memspec needs %d", key, cnt, want);
    if (cnt > maxn) return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s: too many bits", key);
    for (int i = 0; i < cnt; i++) {
        json_t *b = json_array_get(v, (size_t)i);
        if (!json_is_integer(b) || json_integer_value(b) < 0 || json_integer_value(b) > 63)
            return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s[%d]: expected a bit number 0..63", key, i);
        int bit = (int)json_integer_value(b);
        if (*used & (1ULL << bit)) return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s[%d]: bit %d used twice", key, i, bit);
        *used |= 1ULL << bit;
        dst[i] = (uint8_t)bit;
    }
    *n = cnt;
    return 0;
}

int dram_addrmap_from_json(const json_t *j, const dram_memspec *ms, dram_addrmap *am, hw_err *err) {
    memset(am, 0, sizeof *am);
    if (!json_is_object(j)) return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping: expected an object");
    json_t *in = json_object_get(j, "addressmapping");
    if (in) j = in;
    static const char *const known[] = {"BYTE_BIT", "COLUMN_BIT", "BANKGROUP_BIT", "BANK_BIT", "ROW_BIT", "RANK_BIT",
                                        "CHANNEL_BIT", NULL};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)j, k, v) {
        int ok = 0;
        for (int i = 0; known[i]; i++) ok |= !strcmp(k, known[i]);
        if (!ok) return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.%s: unknown field", k);
    }
    uint64_t used = 0;
    uint8_t byte[8], ch[8];
    int nb, nch;
    if (read_bits(j, "BYTE_BIT", -1, 8, byte, &nb, &used, err) ||
        read_bits(j, "COLUMN_BIT", ilog2(ms->columns), 32, am->col, &am->n_col, &used, err) ||
        read_bits(j, "BANKGROUP_BIT", ilog2(ms->bank_groups), 8, am->bg, &am->n_bg, &used, err) ||
        read_bits(j, "BANK_BIT", ilog2(ms->banks / ms->bank_groups), 8, am->bank, &am->n_bank, &used, err) ||
        read_bits(j, "ROW_BIT", -1, 40, am->row, &am->n_row, &used, err) ||
        read_bits(j, "RANK_BIT", ilog2(ms->ranks), 8, am->rank, &am->n_rank, &used, err) ||
        read_bits(j, "CHANNEL_BIT", 0, 8, ch, &nch, &used, err))
        return -1;
    if (am->n_row > ilog2(ms->rows))
        return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.ROW_BIT: %d bits, the memspec has %d", am->n_row, ilog2(ms->rows));
    if (nch) return hw_fail(err, HW_E_BAD_CONFIG, "addressmapping.CHANNEL_BIT: only one channel is modelled");
    return 0;
}

/* ---- traces ---- */

void dram_trace_init(dram_trace *t, double clk_mhz) {
    memset(t, 0, sizeof *t);
    t->clk_mhz = clk_mhz;
}

void dram_trace_free(dram_trace *t) {
    free(t->cycle);
    free(t->addr);
    free(t->write);
    t->cycle = t->addr = NULL;
    t->write = NULL;
    t->n = t->cap = 0;
}

void dram_trace_reserve(dram_trace *t, int64_t n) {
    if (n <= t->cap) return;
    int64_t cap = t->cap ? t->cap : 1024;
    while (cap < n) cap *= 2;
    t->cycle = realloc(t->cycle, (size_t)cap * sizeof *t->cycle);
    t->addr = realloc(t->addr, (size_t)cap * sizeof *t->addr);
    t->write = realloc(t->write, (size_t)cap);
    if (!t->cycle || !t->addr || !t->write) abort();
    t->cap = cap;
}

void dram_trace_push(dram_trace *t, uint64_t cycle, bool write, uint64_t addr) {
    if (t->n == t->cap) dram_trace_reserve(t, t->n + 1);
    t->cycle[t->n] = cycle;
    t->addr[t->n] = addr;
    t->write[t->n] = write;
    t->n++;
}

uint64_t dram_trace_max_cycle(double clk_mhz) {
    int64_t period_ps = clk_mhz > 0 ? llround(1e6 / clk_mhz) : 1;
    return (uint64_t)(DRAM_TRACE_MAX_PS / (period_ps > 0 ? period_ps : 1));
}

int dram_trace_parse(const char *s, size_t len, dram_trace *t, hw_err *err) {
    const char *e = s + len;
    int64_t line = 0;
    uint64_t prev = 0;
    while (s < e) {
        line++;
        const char *nl = memchr(s, '\n', (size_t)(e - s));
        const char *le = nl ? nl : e;
        const char *p = s;
        while (p < le && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
        if (p == le || *p == '#') {
            s = nl ? nl + 1 : e;
            continue;
        }
        if (!isdigit((unsigned char)*p)) return hw_fail(err, HW_E_BAD_CONFIG, "trace line %" PRId64 ": expected '<cycle>:'", line);
        uint64_t cyc = 0, maxc = dram_trace_max_cycle(t->clk_mhz);
        const char *c0 = p;
        while (p < le && isdigit((unsigned char)*p)) {
            if (cyc > (maxc - (uint64_t)(*p - '0')) / 10) {
                while (p < le && isdigit((unsigned char)*p)) p++;
                return hw_fail(err, HW_E_BAD_CONFIG,
                               "trace line %" PRId64 ": cycle %.*s is past the longest trace the model simulates "
                               "(%" PRIu64 " cycles at %g MHz: the model counts time in signed 64-bit ps, about 106 days)",
                               line, (int)(p - c0 < 40 ? p - c0 : 40), c0, maxc, t->clk_mhz);
            }
            cyc = cyc * 10 + (uint64_t)(*p++ - '0');
        }
        if (p >= le || *p != ':') return hw_fail(err, HW_E_BAD_CONFIG, "trace line %" PRId64 ": expected ':' after the cycle", line);
        p++;
        while (p < le && (*p == ' ' || *p == '\t')) p++;
        bool wr;
        if (le - p >= 4 && !strncasecmp(p, "read", 4)) {
            wr = false;
            p += 4;
        } else if (le - p >= 5 && !strncasecmp(p, "write", 5)) {
            wr = true;
            p += 5;
        } else
            return hw_fail(err, HW_E_BAD_CONFIG, "trace line %" PRId64 ": expected 'read' or 'write'", line);
        while (p < le && (*p == ' ' || *p == '\t')) p++;
        if (le - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
        if (p >= le || !isxdigit((unsigned char)*p))
            return hw_fail(err, HW_E_BAD_CONFIG, "trace line %" PRId64 ": expected a hex address", line);
        uint64_t a = 0;
        while (p < le && isxdigit((unsigned char)*p)) {
            int c = *p++;
            a = a * 16 + (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
        }
        if (cyc < prev) return hw_fail(err, HW_E_BAD_CONFIG, "trace line %" PRId64 ": timestamps must not decrease", line);
        prev = cyc;
        dram_trace_push(t, cyc, wr, a);
        s = nl ? nl + 1 : e;
    }
    return 0;
}

int dram_trace_load(const char *path, dram_trace *t, hw_err *err) {
    size_t n;
    char *buf = hw_files_read(&hw_files_local, "trace", path, &n, err); /* local tools only; envs use hw_files_cfg_text */
    if (!buf) return -1;
    int rc = dram_trace_parse(buf, n, t, err);
    free(buf);
    if (rc) hw_err_prefix(err, path);
    return rc;
}

int dram_trace_save(const char *path, const dram_trace *t) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int64_t i = 0; i < t->n; i++)
        fprintf(f, "%" PRIu64 ":\t%s\t0x%" PRIx64 "\n", t->cycle[i], t->write[i] ? "write" : "read", t->addr[i]);
    return fclose(f) ? -1 : 0;
}

static uint64_t rand_below(gsl_rng *r, uint64_t n) {
    if (n <= 1) return 0;
    if (n <= 0xFFFFFFFFULL) return gsl_rng_uniform_int(r, (unsigned long)n);
    /* two 32-bit draws, rejection for uniformity */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t v = ((uint64_t)gsl_rng_get(r) << 32) | (uint64_t)gsl_rng_get(r);
        if (v < lim) return v % n;
    }
}

void dram_generate(const dram_gen *g, dram_trace *t) {
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) abort();
    gsl_rng_set(r, (unsigned long)g->seed);
    uint64_t lines = g->span / 64;
    if (lines == 0) lines = 1;
    dram_trace_reserve(t, t->n + g->count);
    uint64_t cur = 0;
    for (int64_t i = 0; i < g->count; i++) {
        uint64_t line;
        if (g->pattern == DRAM_GEN_STREAM) line = (uint64_t)i % lines;
        else if (g->pattern == DRAM_GEN_RANDOM) line = rand_below(r, lines);
        else {
            if (i > 0 && gsl_rng_uniform(r) < g->stream_frac) line = (cur + 1) % lines;
            else line = rand_below(r, lines);
        }
        cur = line;
        bool rd = gsl_rng_uniform(r) < g->read_ratio;
        dram_trace_push(t, (uint64_t)(i * g->interval), !rd, g->base + line * 64);
    }
    gsl_rng_free(r);
}

void dram_energy_terms_of(const dram_memspec *ms, dram_energy_terms *e) {
    double tck = ms->tck_ps / 1000.0, dev = ms->devices, burst = ms->bl / ms->data_rate;
    e->act = dev * tck * (ms->vdd * (ms->idd0 - ms->idd3n) * ms->RAS + ms->vpp * ms->ipp0 * ms->RAS);
    e->pre = dev * tck * (ms->vdd * (ms->idd0 - ms->idd2n) * (ms->RC - ms->RAS) + ms->vpp * ms->ipp0 * (ms->RC - ms->RAS));
    e->rd = dev * ms->vdd * (ms->idd4r - ms->idd3n) * burst * tck;
    e->wr = dev * ms->vdd * (ms->idd4w - ms->idd3n) * burst * tck;
    e->ref = dev * ms->vdd * (ms->idd5 - ms->idd3n) * ms->RFC * tck;
    e->p_bg_active_mW = dev * ms->vdd * ms->idd3n;
    e->p_bg_pre_mW = dev * ms->vdd * ms->idd2n;
}

/* ---- JSON views of a controller configuration and of a result ---- */

static const char *const pnames[10] = {"PagePolicy", "Scheduler", "SchedulerBuffer", "RequestBufferSize", "RespQueue",
                                       "RefreshPolicy", "RefreshMaxPostponed", "RefreshMaxPulledin", "Arbiter",
                                       "MaxActiveTransactions"};
enum { P_PAGE = 0, P_SCHED, P_BUF, P_RBS, P_RESP, P_REF, P_POST, P_PULL, P_ARB, P_MAT };

void dram_ctrl_set(dram_ctrl *c, int p, int v) {
    switch (p) {
    case P_PAGE: c->page_policy = v; break;
    case P_SCHED: c->scheduler = v; break;
    case P_BUF: c->sched_buffer = v; break;
    case P_RBS: c->request_buffer_size = v; break;
    case P_RESP: c->resp_queue = v; break;
    case P_REF: c->refresh = v; break;
    case P_POST: c->refresh_max_postponed = v; break;
    case P_PULL: c->refresh_max_pulledin = v; break;
    case P_ARB: c->arbiter = v; break;
    default: c->max_active_transactions = v; break;
    }
}

const char *dram_param_name(int p) { return p >= 0 && p < 10 ? pnames[p] : NULL; }

static int find_label(const char *const *names, const char *v) {
    for (int i = 0; names[i]; i++)
        if (!strcasecmp(names[i], v)) return i;
    return -1;
}

int dram_ctrl_apply_json(const json_t *o, dram_ctrl *c, hw_err *err) {
    if (!json_is_object(o)) return hw_fail(err, HW_E_BAD_ACTION, "point: expected an object of named parameters");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        int p = -1;
        for (int q = 0; q < 10; q++)
            if (!strcmp(pnames[q], k)) p = q;
        if (p < 0) return hw_fail(err, HW_E_BAD_ACTION, "point.%s: unknown parameter (known: PagePolicy, Scheduler, "
                                  "SchedulerBuffer, RequestBufferSize, RespQueue, RefreshPolicy, RefreshMaxPostponed, "
                                  "RefreshMaxPulledin, Arbiter, MaxActiveTransactions)", k);
        const char *const *names = p == P_PAGE ? dram_pp_names : p == P_SCHED ? dram_sched_names : p == P_BUF ? dram_buf_names
                                 : p == P_RESP ? dram_resp_names : p == P_REF ? dram_ref_names : p == P_ARB ? dram_arb_names : NULL;
        if (names) {
            int ix = json_is_string(v) ? find_label(names, json_string_value(v)) : -1;
            if (ix < 0) {
                char list[160] = "";
                for (int i = 0; names[i]; i++) {
                    strcat(list, i ? ", " : "");
                    strcat(list, names[i]);
                }
                return hw_fail(err, HW_E_BAD_ACTION, "point.%s: expected one of %s", k, list);
            }
            dram_ctrl_set(c, p, ix);
        } else {
            if (!json_is_integer(v)) return hw_fail(err, HW_E_BAD_ACTION, "point.%s: expected an integer", k);
            json_int_t x = json_integer_value(v);
            json_int_t lo = (p == P_POST || p == P_PULL) ? 0 : 1, hi = p == P_MAT ? 1 << 20 : p == P_RBS ? 4096 : 64;
            if (x < lo || x > hi)
                return hw_fail(err, HW_E_BAD_ACTION, "point.%s: %lld out of range [%lld, %lld]", k, (long long)x,
                               (long long)lo, (long long)hi);
            dram_ctrl_set(c, p, (int)x);
        }
    }
    return 0;
}

/* DRAMSys mcconfig keys beyond the ten gym parameters: the values this model reproduces. */
static const struct {
    const char *key;
    const char *str;  /* accepted string value, or NULL for an integer/boolean */
    long long num;    /* accepted number (booleans: 0 = false) */
} mc_fixed[] = {
    {"CmdMux", "Oldest", 0},          {"PowerDownPolicy", "NoPowerDown", 0}, {"RefreshManagement", NULL, 0},
    {"ThinkDelayFw", NULL, 1},        {"ThinkDelayBw", NULL, 0},             {"PhyDelayFw", NULL, 0},
    {"PhyDelayBw", NULL, 0},          {"ArbitrationDelayFw", NULL, 0},       {"ArbitrationDelayBw", NULL, 0},
    {"BlockingReadDelay", NULL, 0},   {"BlockingWriteDelay", NULL, 0},       {"HighWatermark", NULL, 0},
    {"LowWatermark", NULL, 0},
};

int dram_ctrl_apply_mcconfig(const json_t *o, dram_ctrl *c, hw_err *err) {
    const char *where = "controller";
    if (json_is_object(o) && json_object_get(o, "mcconfig")) {
        if (json_object_size(o) != 1)
            return hw_fail(err, HW_E_BAD_CONFIG, "controller: expected only \"mcconfig\" next to it (DRAMSys's file form)");
        o = json_object_get(o, "mcconfig");
        where = "mcconfig";
    }
    if (!json_is_object(o)) return hw_fail(err, HW_E_BAD_CONFIG, "%s: expected an object", where);
    json_t *gym = json_object();
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)o, k, v) {
        bool is_gym = false;
        for (int q = 0; q < 10; q++) is_gym |= !strcmp(pnames[q], k);
        if (is_gym) {
            json_object_set(gym, k, v);
            continue;
        }
        if (!strcmp(k, "RequestBufferSizeRead") || !strcmp(k, "RequestBufferSizeWrite")) {
            if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 4096) {
                rc = hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: expected an integer in [1, 4096]", where, k);
                break;
            }
            if (k[17] == 'R') c->buffer_size_read = (int)json_integer_value(v);
            else c->buffer_size_write = (int)json_integer_value(v);
            continue;
        }
        if (!strcmp(k, "PowerDownTimeout")) continue; /* unused with NoPowerDown (checked below) */
        int f = -1;
        for (size_t i = 0; i < sizeof mc_fixed / sizeof *mc_fixed; i++)
            if (!strcmp(mc_fixed[i].key, k)) f = (int)i;
        if (f < 0) {
            rc = hw_fail(err, HW_E_BAD_CONFIG,
                         "%s.%s: unknown key (the model takes the ten gym parameters, RequestBufferSizeRead/Write, "
                         "and DRAMSys's CmdMux, PowerDownPolicy, RefreshManagement, delays and watermarks at the values "
                         "it models)",
                         where, k);
            break;
        }
        bool ok;
        char want[64];
        if (mc_fixed[f].str) {
            ok = json_is_string(v) && !strcmp(json_string_value(v), mc_fixed[f].str);
            snprintf(want, sizeof want, "\"%s\"", mc_fixed[f].str);
        } else if (!strcmp(k, "RefreshManagement")) {
            ok = json_is_false(v) || (json_is_integer(v) && json_integer_value(v) == 0);
            snprintf(want, sizeof want, "false");
        } else {
            ok = json_is_integer(v) && json_integer_value(v) == mc_fixed[f].num;
            snprintf(want, sizeof want, "%lld", mc_fixed[f].num);
        }
        if (!ok) {
            char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            rc = hw_fail(err, HW_E_BAD_CONFIG, "%s.%s: %s is not modelled (this model reproduces DRAMSys with %s)", where, k,
                         got ? got : "?", want);
            free(got);
            break;
        }
    }
    if (!rc && dram_ctrl_apply_json(gym, c, err)) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        rc = hw_fail(err, HW_E_BAD_CONFIG, "%s.%s", where, strncmp(msg, "point.", 6) ? msg : msg + 6);
    }
    json_decref(gym);
    return rc;
}

void dram_result_json(const dram_ctrl *c, const dram_result *r, json_t *m) {
    if (!m) return;
    json_t *cfg = json_object();
    json_object_set_new(cfg, "PagePolicy", json_string(dram_pp_names[c->page_policy]));
    json_object_set_new(cfg, "Scheduler", json_string(dram_sched_names[c->scheduler]));
    json_object_set_new(cfg, "SchedulerBuffer", json_string(dram_buf_names[c->sched_buffer]));
    json_object_set_new(cfg, "RequestBufferSize", json_integer(c->request_buffer_size));
    json_object_set_new(cfg, "RespQueue", json_string(dram_resp_names[c->resp_queue]));
    json_object_set_new(cfg, "RefreshPolicy", json_string(dram_ref_names[c->refresh]));
    json_object_set_new(cfg, "RefreshMaxPostponed", json_integer(c->refresh_max_postponed));
    json_object_set_new(cfg, "RefreshMaxPulledin", json_integer(c->refresh_max_pulledin));
    json_object_set_new(cfg, "Arbiter", json_string(dram_arb_names[c->arbiter]));
    json_object_set_new(cfg, "MaxActiveTransactions", json_integer(c->max_active_transactions));
    json_object_set_new(m, "config", cfg);
    json_object_set_new(m, "n_requests", json_integer(r->n_req));
    json_object_set_new(m, "n_reads", json_integer(r->n_read));
    json_object_set_new(m, "n_writes", json_integer(r->n_write));
    json_object_set_new(m, "total_time_ns", json_real(r->total_time_ns));
    json_object_set_new(m, "avg_latency_ns", json_real(r->avg_lat_ns));
    json_object_set_new(m, "avg_read_latency_ns", json_real(r->avg_read_lat_ns));
    json_object_set_new(m, "avg_write_latency_ns", json_real(r->avg_write_lat_ns));
    json_object_set_new(m, "p99_latency_ns", json_real(r->p99_lat_ns));
    json_object_set_new(m, "p99_read_latency_ns", json_real(r->p99_read_lat_ns));
    json_object_set_new(m, "max_latency_ns", json_real(r->max_lat_ns));
    json_object_set_new(m, "bandwidth_GBps", json_real(r->bandwidth_GBps));
    json_object_set_new(m, "energy_pJ", json_real(r->energy_pJ));
    json_object_set_new(m, "power_mW", json_real(r->power_mW));
    json_t *eb = json_object();
    json_object_set_new(eb, "ACT", json_real(r->energy_act_pJ));
    json_object_set_new(eb, "PRE", json_real(r->energy_pre_pJ));
    json_object_set_new(eb, "RD", json_real(r->energy_rd_pJ));
    json_object_set_new(eb, "WR", json_real(r->energy_wr_pJ));
    json_object_set_new(eb, "REF", json_real(r->energy_ref_pJ));
    json_object_set_new(eb, "background", json_real(r->energy_bg_pJ));
    json_object_set_new(m, "energy_breakdown_pJ", eb);
    json_t *cmds = json_object();
    for (int k = 0; k < DRAM_NCMD; k++) json_object_set_new(cmds, dram_cmd_names[k], json_integer(r->cmd[k]));
    json_object_set_new(m, "commands", cmds);
    json_object_set_new(m, "row_hits", json_integer(r->row_hits));
    json_object_set_new(m, "row_misses", json_integer(r->row_misses));
    json_object_set_new(m, "row_hit_rate", json_real(r->row_hit_rate));
}


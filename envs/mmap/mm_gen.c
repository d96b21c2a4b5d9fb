/* mm_gen.c - program generator and the named dataset.
 *
 * A program is built as a dataflow graph of ops over tensors (forward pass; for training also
 * the loss, the backward pass with gradient accumulation, and in-place optimizer updates whose
 * outputs alias the weights and optimizer state), then lowered to an MMapGame problem: one
 * instruction per op, one buffer per operand, live ranges from definitions and last uses, and
 * per-instruction latency tables L_I(S) from a roofline model:
 *   L_I(S) = overhead + max(flops / peak, sum_b bytes_b / bw(b in S ? CMEM : HBM))
 * over the 8 largest operands (the others stay in HBM), times a small seeded measurement noise.
 * Supply values default to L_I(all varied operands in CMEM) (Appendix A). */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/zoo.h"
#include "mm_internal.h"

/* TPUv4i-like constants (per chip): bf16 peak, HBM and CMEM bandwidth, DMA copy rate. */
#define PEAK_FLOP_PER_NS 138000.0
#define HBM_B_PER_NS 614.0
#define CMEM_B_PER_NS 2048.0
#define COPY_B_PER_NS 300.0
#define OP_OVERHEAD_NS 150.0
#define ACT_BYTES 2
#define PARAM_BYTES 4

typedef struct gt {
    int64_t bytes;
    int alias;     /* alias id (tensor id of the group root) or -1 */
    int def;       /* defining op, -1 = program input / parameter */
    int last;      /* last op reading it */
    int is_out;    /* program output (live to the end) */
} gt;

#define GMAXIO 6
typedef struct gop {
    char name[48];
    double flops;
    int nin, nout;
    int in[GMAXIO], out[3];
} gop;

typedef struct gb {
    gt *t;
    int nt, ct;
    gop *o;
    int no, co;
    int train;
    /* forward record for backward */
    struct fnode {
        int nin, in[3], w, m, out;
        double flops;
        char name[40];
    } *f;
    int nf, cf;
} gb;

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) abort();
    return p;
}

static int tnew(gb *g, int64_t bytes) {
    if (g->nt == g->ct) {
        g->ct = g->ct ? 2 * g->ct : 256;
        g->t = xrealloc(g->t, sizeof(gt) * (size_t)g->ct);
    }
    if (bytes < 1) bytes = 1;
    g->t[g->nt] = (gt){bytes, -1, -1, -1, 0};
    return g->nt++;
}

static void opadd(gb *g, const char *name, double flops, int nin, const int *in, int nout, const int *out) {
    if (g->no == g->co) {
        g->co = g->co ? 2 * g->co : 256;
        g->o = xrealloc(g->o, sizeof(gop) * (size_t)g->co);
    }
    gop *o = &g->o[g->no];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    o->flops = flops;
    o->nin = nin;
    o->nout = nout;
    for (int i = 0; i < nin; i++) {
        o->in[i] = in[i];
        g->t[in[i]].last = g->no;
    }
    for (int i = 0; i < nout; i++) {
        o->out[i] = out[i];
        g->t[out[i]].def = g->no;
    }
    g->no++;
}

/* A parameter (weight) with its optimizer state when training. */
static int param(gb *g, int64_t elems, int *mom) {
    int w = tnew(g, elems * (g->train ? PARAM_BYTES : ACT_BYTES));
    g->t[w].alias = w;
    *mom = -1;
    if (g->train) {
        *mom = tnew(g, elems * PARAM_BYTES);
        g->t[*mom].alias = *mom;
    }
    return w;
}

/* Forward node: out = f(inputs, weight). Returns the output tensor. */
static int fwd(gb *g, const char *name, double flops, int nin, const int *in, int w, int m, int64_t out_bytes) {
    int y = tnew(g, out_bytes);
    int ins[4], n = 0;
    for (int i = 0; i < nin; i++) ins[n++] = in[i];
    if (w >= 0) ins[n++] = w;
    opadd(g, name, flops, n, ins, 1, &y);
    if (g->nf == g->cf) {
        g->cf = g->cf ? 2 * g->cf : 256;
        g->f = xrealloc(g->f, sizeof(*g->f) * (size_t)g->cf);
    }
    struct fnode *f = &g->f[g->nf++];
    memset(f, 0, sizeof *f);
    f->nin = nin;
    for (int i = 0; i < nin; i++) f->in[i] = in[i];
    f->w = w;
    f->m = m;
    f->out = y;
    f->flops = flops;
    snprintf(f->name, sizeof f->name, "%s", name);
    return y;
}

static int ew1(gb *g, const char *name, int x) {
    return fwd(g, name, (double)(g->t[x].bytes / ACT_BYTES) * 2, 1, &x, -1, -1, g->t[x].bytes);
}
static int ew2(gb *g, const char *name, int x, int y) {
    int in[2] = {x, y};
    return fwd(g, name, (double)(g->t[x].bytes / ACT_BYTES) * 2, 2, in, -1, -1, g->t[x].bytes);
}
/* Dense layer: [rows x k] x [k x n] */
static int dense(gb *g, const char *name, int x, int64_t rows, int64_t k, int64_t n) {
    int m, w = param(g, k * n, &m);
    return fwd(g, name, 2.0 * (double)rows * (double)k * (double)n, 1, &x, w, m, rows * n * ACT_BYTES);
}

/* Loss, backward pass and in-place updates. */
static void backward(gb *g, int y_final) {
    int *grad = malloc(sizeof(int) * (size_t)(g->nt + 1) * 8);
    if (!grad) abort();
    int cap = (g->nt + 1) * 8;
    for (int i = 0; i < cap; i++) grad[i] = -1;
    int label = tnew(g, g->t[y_final].bytes);
    int dy = tnew(g, g->t[y_final].bytes);
    int lin[2] = {y_final, label};
    opadd(g, "loss_grad", (double)g->t[y_final].bytes * 4, 2, lin, 1, &dy);
    grad[y_final] = dy;
    char nm[64];
    for (int i = g->nf - 1; i >= 0; i--) {
        struct fnode f = g->f[i];
        int dY = grad[f.out];
        if (dY < 0) continue;
        int dW = -1;
        if (f.w >= 0) {
            dW = tnew(g, g->t[f.w].bytes);
            int in[2] = {f.in[0], dY};
            snprintf(nm, sizeof nm, "%.36s.bwd_w", f.name);
            opadd(g, nm, f.flops, 2, in, 1, &dW);
        }
        for (int k = 0; k < f.nin; k++) {
            int x = f.in[k];
            if (g->t[x].def < 0) continue; /* program input: no gradient needed */
            int dx = tnew(g, g->t[x].bytes);
            int other = f.w >= 0 ? f.w : f.nin > 1 ? f.in[k == 0 ? 1 : 0] : f.out;
            int in[2] = {dY, other};
            snprintf(nm, sizeof nm, "%.36s.bwd_x%d", f.name, k);
            opadd(g, nm, f.w >= 0 || f.nin > 1 ? f.flops : f.flops * 2, 2, in, 1, &dx);
            if (grad[x] < 0) {
                grad[x] = dx;
            } else {
                int acc = tnew(g, g->t[x].bytes);
                int ain[2] = {grad[x], dx};
                snprintf(nm, sizeof nm, "%.36s.grad_acc", f.name);
                opadd(g, nm, (double)(g->t[x].bytes / ACT_BYTES), 2, ain, 1, &acc);
                grad[x] = acc;
            }
        }
        if (f.w >= 0) {
            /* in-place update: W' aliases W, M' aliases M */
            int w2 = tnew(g, g->t[f.w].bytes), m2 = tnew(g, g->t[f.m].bytes);
            g->t[w2].alias = g->t[f.w].alias;
            g->t[m2].alias = g->t[f.m].alias;
            g->t[w2].is_out = g->t[m2].is_out = 1;
            int in[3] = {f.w, dW, f.m}, out[2] = {w2, m2};
            snprintf(nm, sizeof nm, "%.36s.update", f.name);
            opadd(g, nm, (double)(g->t[f.w].bytes / PARAM_BYTES) * 4, 3, in, 2, out);
        }
        /* grad[] may need room for tensors created above */
        if (g->nt + 8 >= cap) {
            int nc = (g->nt + 8) * 2;
            grad = xrealloc(grad, sizeof(int) * (size_t)nc);
            for (int j = cap; j < nc; j++) grad[j] = -1;
            cap = nc;
        }
    }
    free(grad);
}

/* ---------------- templates ---------------- */
static int t_mlp(gb *g, int batch, int layers, int width) {
    int x = tnew(g, (int64_t)batch * width * ACT_BYTES);
    char nm[40];
    for (int l = 0; l < layers; l++) {
        snprintf(nm, sizeof nm, "fc%d", l);
        x = dense(g, nm, x, batch, width, width);
        snprintf(nm, sizeof nm, "relu%d", l);
        x = ew1(g, nm, x);
    }
    return x;
}

static int t_rnn(gb *g, int batch, int steps, int width, int lstm, int layers) {
    int gates = lstm ? 4 : 1;
    int wx[8], mx[8], wh[8], mh[8], h[8], c[8];
    for (int l = 0; l < layers; l++) {
        wx[l] = param(g, (int64_t)width * width * gates, &mx[l]);
        wh[l] = param(g, (int64_t)width * width * gates, &mh[l]);
        h[l] = tnew(g, (int64_t)batch * width * ACT_BYTES);
        c[l] = tnew(g, (int64_t)batch * width * ACT_BYTES);
    }
    int last = -1;
    char nm[40];
    int64_t rows = batch;
    for (int s = 0; s < steps; s++) {
        int x = tnew(g, (int64_t)batch * width * ACT_BYTES);
        for (int l = 0; l < layers; l++) {
            snprintf(nm, sizeof nm, "s%d.l%d.x", s, l);
            int a = fwd(g, nm, 2.0 * (double)rows * width * width * gates, 1, &x, wx[l], mx[l], rows * width * gates * ACT_BYTES);
            snprintf(nm, sizeof nm, "s%d.l%d.h", s, l);
            int b = fwd(g, nm, 2.0 * (double)rows * width * width * gates, 1, &h[l], wh[l], mh[l], rows * width * gates * ACT_BYTES);
            snprintf(nm, sizeof nm, "s%d.l%d.add", s, l);
            int sum = ew2(g, nm, a, b);
            if (lstm) {
                snprintf(nm, sizeof nm, "s%d.l%d.gates", s, l);
                int gt_ = ew1(g, nm, sum);
                snprintf(nm, sizeof nm, "s%d.l%d.cell", s, l);
                int in[2] = {gt_, c[l]};
                c[l] = fwd(g, nm, (double)rows * width * 4, 2, in, -1, -1, rows * width * ACT_BYTES);
                snprintf(nm, sizeof nm, "s%d.l%d.out", s, l);
                int in2[2] = {c[l], gt_};
                h[l] = fwd(g, nm, (double)rows * width * 3, 2, in2, -1, -1, rows * width * ACT_BYTES);
            } else {
                snprintf(nm, sizeof nm, "s%d.l%d.tanh", s, l);
                h[l] = ew1(g, nm, sum);
            }
            x = h[l];
        }
        last = x;
    }
    return last;
}

static int t_wavenet(gb *g, int batch, int blocks, int ch, int samples) {
    int64_t act = (int64_t)batch * ch * samples * ACT_BYTES;
    int x = tnew(g, act);
    int skip = -1;
    char nm[40];
    double conv2 = 2.0 * 2 * ch * ch * (double)samples * batch, conv1 = 2.0 * ch * ch * (double)samples * batch;
    for (int b = 0; b < blocks; b++) {
        int m, w;
        w = param(g, (int64_t)2 * ch * ch, &m);
        snprintf(nm, sizeof nm, "b%d.filter", b);
        int f = fwd(g, nm, conv2, 1, &x, w, m, act);
        w = param(g, (int64_t)2 * ch * ch, &m);
        snprintf(nm, sizeof nm, "b%d.gate", b);
        int gg = fwd(g, nm, conv2, 1, &x, w, m, act);
        snprintf(nm, sizeof nm, "b%d.tanh_sigmoid", b);
        int z = ew2(g, nm, f, gg);
        w = param(g, (int64_t)ch * ch, &m);
        snprintf(nm, sizeof nm, "b%d.res1x1", b);
        int r = fwd(g, nm, conv1, 1, &z, w, m, act);
        snprintf(nm, sizeof nm, "b%d.res_add", b);
        x = ew2(g, nm, x, r);
        w = param(g, (int64_t)ch * ch, &m);
        snprintf(nm, sizeof nm, "b%d.skip1x1", b);
        int s = fwd(g, nm, conv1, 1, &z, w, m, act);
        if (skip < 0) {
            skip = s;
        } else {
            snprintf(nm, sizeof nm, "b%d.skip_add", b);
            skip = ew2(g, nm, skip, s);
        }
    }
    return ew1(g, "post_relu", skip);
}

static int t_transformer(gb *g, int batch, int layers, int d, int seq, int heads) {
    int64_t rows = (int64_t)batch * seq;
    int x = tnew(g, rows * d * ACT_BYTES);
    char nm[48];
    for (int l = 0; l < layers; l++) {
        int m, w;
        w = param(g, d, &m);
        snprintf(nm, sizeof nm, "l%d.ln1", l);
        int ln = fwd(g, nm, (double)rows * d * 8, 1, &x, w, m, rows * d * ACT_BYTES);
        snprintf(nm, sizeof nm, "l%d.q", l);
        int q = dense(g, nm, ln, rows, d, d);
        snprintf(nm, sizeof nm, "l%d.k", l);
        int k = dense(g, nm, ln, rows, d, d);
        snprintf(nm, sizeof nm, "l%d.v", l);
        int v = dense(g, nm, ln, rows, d, d);
        int64_t sc_bytes = (int64_t)batch * heads * seq * seq * ACT_BYTES;
        snprintf(nm, sizeof nm, "l%d.qk", l);
        int qk_in[2] = {q, k};
        int sc = fwd(g, nm, 2.0 * (double)batch * seq * seq * d, 2, qk_in, -1, -1, sc_bytes);
        snprintf(nm, sizeof nm, "l%d.softmax", l);
        int p = fwd(g, nm, (double)sc_bytes / ACT_BYTES * 5, 1, &sc, -1, -1, sc_bytes);
        snprintf(nm, sizeof nm, "l%d.pv", l);
        int pv_in[2] = {p, v};
        int a = fwd(g, nm, 2.0 * (double)batch * seq * seq * d, 2, pv_in, -1, -1, rows * d * ACT_BYTES);
        snprintf(nm, sizeof nm, "l%d.proj", l);
        int o = dense(g, nm, a, rows, d, d);
        snprintf(nm, sizeof nm, "l%d.res1", l);
        int x1 = ew2(g, nm, x, o);
        w = param(g, d, &m);
        snprintf(nm, sizeof nm, "l%d.ln2", l);
        int ln2 = fwd(g, nm, (double)rows * d * 8, 1, &x1, w, m, rows * d * ACT_BYTES);
        snprintf(nm, sizeof nm, "l%d.ff1", l);
        int h = dense(g, nm, ln2, rows, d, 4 * d);
        snprintf(nm, sizeof nm, "l%d.gelu", l);
        int h2 = ew1(g, nm, h);
        snprintf(nm, sizeof nm, "l%d.ff2", l);
        int f = dense(g, nm, h2, rows, 4 * d, d);
        snprintf(nm, sizeof nm, "l%d.res2", l);
        x = ew2(g, nm, x1, f);
    }
    return x;
}

/* A zoo model: each layer's main op on its first input (with a resize/pool op when the
 * producer's output does not match the layer's input), extra inputs added after it
 * (residuals), a ReLU after weighted layers. */
static int t_zoo(gb *g, const hw_model *mdl, int batch, hw_err *err) {
    int *outs = malloc(sizeof(int) * (size_t)mdl->n);
    if (!outs) abort();
    int last = -1;
    char nm[64];
    for (int i = 0; i < mdl->n; i++) {
        const hw_layer *L = &mdl->layers[i];
        int n1 = L->N > 0 ? L->N : 1;
        int64_t in_b = hw_layer_input_elems(L) / n1 * batch * ACT_BYTES;
        int64_t out_b = hw_layer_output_elems(L) / n1 * batch * ACT_BYTES;
        double flops = 2.0 * (double)hw_layer_macs(L) / n1 * batch;
        int ins[HW_LAYER_MAX_IN], nin = L->n_in > 0 ? L->n_in : 1;
        for (int k = 0; k < nin; k++) {
            int pidx = L->n_in > 0 ? L->in[k] : (i > 0 ? i - 1 : -1);
            if (pidx >= i) {
                free(outs);
                return hw_fail(err, HW_E_INTERNAL, "zoo model %s layer %d: input from a later layer", mdl->name, i);
            }
            int src = pidx < 0 ? tnew(g, in_b) : outs[pidx];
            if (g->t[src].bytes != in_b && k == 0) {
                snprintf(nm, sizeof nm, "%.40s.resize", L->name);
                src = fwd(g, nm, (double)(g->t[src].bytes / ACT_BYTES) * 2, 1, &src, -1, -1, in_b);
            }
            ins[k] = src;
        }
        int y;
        if (L->op == HW_OP_CONV || L->op == HW_OP_DWCONV || L->op == HW_OP_FC || L->op == HW_OP_EMBED ||
            (L->op == HW_OP_NORM)) {
            int m, w = param(g, hw_layer_weight_elems(L) > 0 ? hw_layer_weight_elems(L) : 1, &m);
            snprintf(nm, sizeof nm, "%.56s", L->name);
            y = fwd(g, nm, flops > 0 ? flops : (double)out_b, 1, &ins[0], w, m, out_b);
        } else {
            snprintf(nm, sizeof nm, "%.56s", L->name);
            int cnt = L->op == HW_OP_MATMUL || L->op == HW_OP_CONCAT ? (nin > 2 ? 2 : nin) : 1;
            y = fwd(g, nm, flops > 0 ? flops : (double)out_b * 2, cnt, ins, -1, -1, out_b);
            if (cnt == 2) nin = 1; /* both inputs consumed */
        }
        for (int k = 1; k < nin; k++) {
            int r = ins[k];
            if (g->t[r].bytes != out_b) {
                snprintf(nm, sizeof nm, "%.40s.proj%d", L->name, k);
                r = fwd(g, nm, (double)(g->t[r].bytes / ACT_BYTES) * 2, 1, &r, -1, -1, out_b);
            }
            snprintf(nm, sizeof nm, "%.40s.add%d", L->name, k);
            y = ew2(g, nm, y, r);
        }
        if (L->op == HW_OP_CONV || L->op == HW_OP_FC) {
            snprintf(nm, sizeof nm, "%.40s.relu", L->name);
            y = ew1(g, nm, y);
        }
        outs[i] = y;
        last = y;
    }
    free(outs);
    return last;
}

/* ---------------- lowering ---------------- */
static mm_problem *lower(gb *g, const char *name, uint64_t seed, double noise, double cmem_frac, int64_t cmem_bytes, hw_err *err) {
    int T = g->no;
    int64_t nb = 0;
    for (int i = 0; i < T; i++) nb += g->o[i].nin + g->o[i].nout;
    mm_problem *p = mm_problem_alloc(T, (int32_t)nb);
    snprintf(p->name, sizeof p->name, "%s", name);
    int32_t b = 0;
    for (int i = 0; i < T; i++) {
        gop *o = &g->o[i];
        mm_instr *I = &p->ins[i];
        snprintf(I->name, sizeof I->name, "%s", o->name);
        I->first = b;
        I->nbuf = o->nin + o->nout;
        I->supply = -1;
        for (int k = 0; k < o->nin + o->nout; k++, b++) {
            int out = k >= o->nin;
            int ti = out ? o->out[k - o->nin] : o->in[k];
            gt *t = &g->t[ti];
            mm_buffer *B = &p->buf[b];
            B->size = t->bytes;
            B->is_output = (int8_t)out;
            B->user_tensor = ti;
            B->user_alias = t->alias;
            B->demand = -1;
            if (!out) {
                B->lr_start = t->def >= 0 ? t->def + 1 : 0;
                B->lr_end = i;
            } else {
                B->lr_start = i;
                B->lr_end = t->is_out ? T - 1 : (t->last > i ? t->last : i);
            }
        }
    }
    /* peak live bytes */
    double *diff = calloc((size_t)T + 1, sizeof(double));
    if (!diff) abort();
    for (int ti = 0; ti < g->nt; ti++) {
        gt *t = &g->t[ti];
        if (t->def < 0 && t->last < 0) continue;
        int s = t->def >= 0 ? t->def : 0;
        int e = t->is_out ? T - 1 : (t->last >= s ? t->last : s);
        diff[s] += (double)t->bytes;
        diff[e + 1] -= (double)t->bytes;
    }
    double live = 0, peak = 0;
    for (int i = 0; i < T; i++) {
        live += diff[i];
        if (live > peak) peak = live;
    }
    free(diff);
    int64_t cmem = cmem_bytes > 0 ? cmem_bytes : (int64_t)(peak * cmem_frac);
    if (cmem < (1 << 20)) cmem = 1 << 20;
    int64_t gran = 256;
    while (cmem / gran > 1024) gran *= 2;
    p->granule = gran;
    p->max_size = cmem / gran * gran;
    p->copy_ns_per_byte = 1.0 / COPY_B_PER_NS;
    /* latency tables */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)(seed * 2654435761ULL + 17));
    for (int i = 0; i < T; i++) {
        mm_instr *I = &p->ins[i];
        mm_default_varying(p, i);
        double fixed = 0;
        for (int k = 0; k < I->nbuf; k++) {
            int varied = 0;
            for (int j = 0; j < I->nvar; j++) varied |= I->var_buf[j] == I->first + k;
            if (!varied) fixed += (double)p->buf[I->first + k].size / HBM_B_PER_NS;
        }
        double comp = g->o[i].flops / PEAK_FLOP_PER_NS;
        int nm = 1 << I->nvar;
        I->lat = calloc((size_t)nm, sizeof(double));
        if (!I->lat) abort();
        for (int m = 0; m < nm; m++) {
            double mem = fixed;
            for (int j = 0; j < I->nvar; j++) {
                double by = (double)p->buf[I->var_buf[j]].size;
                mem += (m >> j & 1) ? by / CMEM_B_PER_NS : by / HBM_B_PER_NS;
            }
            double L = OP_OVERHEAD_NS + (comp > mem ? comp : mem);
            if (noise > 0) L *= 1.0 + noise * (2 * gsl_rng_uniform(rng) - 1);
            I->lat[m] = L;
        }
    }
    gsl_rng_free(rng);
    if (mm_problem_finalize(p, err)) {
        mm_problem_free(p);
        return NULL;
    }
    return p;
}

static void gb_free(gb *g) {
    free(g->t);
    free(g->o);
    free(g->f);
}

mm_problem *mm_generate(const mm_gen_params *gp, const char *name, hw_err *err) {
    gb g = {0};
    g.train = gp->train;
    int batch = gp->batch > 0 ? gp->batch : 1;
    int rep = gp->repeat > 0 ? gp->repeat : 1;
    int width = gp->width > 0 ? gp->width : 512;
    int y = -1;
    const char *m = gp->model;
    if (strcmp(m, "mlp") == 0) y = t_mlp(&g, batch, rep, width);
    else if (strcmp(m, "rnn") == 0) y = t_rnn(&g, batch, rep, width, 0, 1);
    else if (strcmp(m, "lstm") == 0) y = t_rnn(&g, batch, rep, width, 1, 2);
    else if (strcmp(m, "wavenet") == 0) y = t_wavenet(&g, batch, rep, width, 4096);
    else if (strcmp(m, "transformer") == 0) y = t_transformer(&g, batch, rep, width, 512, width / 64 > 0 ? width / 64 : 1);
    else {
        const hw_model *mdl = hw_zoo_find(m);
        if (!mdl) {
            gb_free(&g);
            hw_fail(err, HW_E_BAD_CONFIG, "model: unknown '%s' (templates: mlp, rnn, lstm, wavenet, transformer; or a zoo model)", m);
            return NULL;
        }
        y = t_zoo(&g, mdl, batch, err);
        if (y < 0) {
            gb_free(&g);
            return NULL;
        }
    }
    g.t[y].is_out = 1;
    if (g.train) backward(&g, y);
    mm_problem *p = lower(&g, name, gp->seed, 0.02, 0.25, gp->cmem_bytes, err);
    gb_free(&g);
    return p;
}

/* ---------------- dataset ---------------- */
typedef struct ds_entry {
    const char *name, *model;
    int train, batch, repeat, width;
} ds_entry;

/* Names echo the paper's Tables 2 and 4; shapes come from the zoo or the templates. */
static const ds_entry DATASET[] = {
    {"mlp_train_batch_16", "mlp", 1, 16, 8, 1024},
    {"alexnet_train_batch_32", "alexnet", 1, 32, 0, 0},
    {"inference_resnet", "resnet50", 0, 8, 0, 0},
    {"inference_lstm", "lstm", 0, 32, 24, 1024},
    {"rnn_2", "rnn", 1, 64, 48, 1024},
    {"mobilenet_v2_train_batch_128", "mobilenet_v2", 1, 128, 0, 0},
    {"wavenet_coherent_batch32", "wavenet", 1, 32, 30, 128},
    {"rnn_6", "rnn", 1, 128, 120, 2048},
    {"resnet50_train_batch_32", "resnet50", 1, 32, 0, 0},
    {"mlperf_nmt_1_shard_batch_64", "lstm", 1, 64, 48, 1024},
    {"alphatensor_like", "transformer", 1, 8, 48, 512},
    {"tensor2tensor_transformer_bf16", "transformer", 1, 16, 52, 1024},
    {"bert_base_train_batch_16", "bert_base", 1, 16, 0, 0},
    {"transformer_big_train", "transformer", 1, 32, 94, 1024},
};
#define NDATASET ((int)(sizeof DATASET / sizeof DATASET[0]))

int mm_dataset_count(void) { return NDATASET; }
const char *mm_dataset_name(int i) { return i >= 0 && i < NDATASET ? DATASET[i].name : NULL; }

mm_problem *mm_dataset_load(const char *name, uint64_t seed, hw_err *err) {
    for (int i = 0; i < NDATASET; i++)
        if (strcmp(DATASET[i].name, name) == 0) {
            mm_gen_params gp = {DATASET[i].model, DATASET[i].train, DATASET[i].batch, DATASET[i].repeat, DATASET[i].width, seed, 0};
            return mm_generate(&gp, name, err);
        }
    char list[1200] = "";
    size_t n = 0;
    for (int i = 0; i < NDATASET && n + 64 < sizeof list; i++) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", DATASET[i].name);
    hw_fail(err, HW_E_BAD_CONFIG, "problem: unknown program '%s' (dataset: %s; or a .json/.msgpack file path)", name, list);
    return NULL;
}

mm_problem *mm_problem_open(const char *name_or_path, uint64_t seed, hw_err *err) {
    if (strchr(name_or_path, '/') || strstr(name_or_path, ".json") || strstr(name_or_path, ".msgpack") || strstr(name_or_path, ".mpk"))
        return mm_problem_load(name_or_path, err);
    return mm_dataset_load(name_or_path, seed, err);
}

/* Tests of the workload zoo (envs/common/zoo.h): built-in models, lookup, layer arithmetic,
 * validation and the zoo file format (docs/zoo.md). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/zoo.h"

static const hw_model *get(const char *name) {
    const hw_model *m = hw_zoo_find(name);
    cr_assert(m, "model %s missing", name);
    return m;
}

static const hw_layer *layer(const hw_model *m, const char *name) {
    hw_err e;
    int i = hw_zoo_layer_index(m, name, &e);
    cr_assert_geq(i, 0, "%s", e.msg);
    return &m->layers[i];
}

static int count_op(const hw_model *m, hw_op op) {
    int n = 0;
    for (int i = 0; i < m->n; i++) n += m->layers[i].op == op;
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Node counts and granularity */

Test(zoo, egrl_node_counts) {
    /* EGRL paper: ResNet-50 57 nodes, ResNet-101 108 nodes, BERT 376 nodes. */
    cr_assert_eq(get("resnet50")->n, 57);
    cr_assert_eq(get("resnet101")->n, 108);
    cr_assert_eq(get("bert_base")->n, 376);
    /* ResNet: 53 / 104 convs (incl. 4 projection shortcuts) + maxpool, avgpool, fc, softmax */
    cr_assert_eq(count_op(get("resnet50"), HW_OP_CONV), 53);
    cr_assert_eq(count_op(get("resnet101"), HW_OP_CONV), 104);
    /* BERT: 12 layers x 6 FC + pooler */
    cr_assert_eq(count_op(get("bert_base"), HW_OP_FC), 73);
    cr_assert_eq(count_op(get("bert_base"), HW_OP_MATMUL), 24);
    cr_assert_eq(count_op(get("bert_base"), HW_OP_NORM), 25);
}

Test(zoo, rl_scheduling_layer_counts) {
    /* RL-Scheduling Table 3: YOLOv3 75 layers, Inception-v4 149 layers (conv layers). */
    cr_assert_eq(count_op(get("yolov3"), HW_OP_CONV), 75);
    cr_assert_eq(count_op(get("inception_v4"), HW_OP_CONV), 149);
    /* ResNet-50's "50" = 49 main-path convs + fc (projection shortcuts not counted). */
    const hw_model *r = get("resnet50");
    int main_path = 0;
    for (int i = 0; i < r->n; i++)
        if (r->layers[i].op == HW_OP_CONV && !strstr(r->layers[i].name, "downsample")) main_path++;
    cr_assert_eq(main_path + count_op(r, HW_OP_FC), 50);
    /* MobileNet-v3 Large: 1 + 2 + 14*3 + 1 = 46 convs (torchvision layout), 16 SE fc + 2 head fc */
    cr_assert_eq(count_op(get("mobilenet_v3"), HW_OP_CONV), 31);
    cr_assert_eq(count_op(get("mobilenet_v3"), HW_OP_DWCONV), 15);
    cr_assert_eq(count_op(get("mobilenet_v3"), HW_OP_FC), 18);
}

Test(zoo, all_builtins_validate) {
    cr_assert_eq(hw_zoo_count(), 10);
    const char *names[] = {"mobilenet_v2", "vgg16", "resnet18", "resnet50", "alexnet",
                           "resnet101", "bert_base", "yolov3", "inception_v4", "mobilenet_v3"};
    for (int i = 0; i < hw_zoo_count(); i++) {
        hw_err e;
        cr_assert_str_eq(hw_zoo_at(i)->name, names[i]);
        cr_assert_eq(hw_zoo_validate(hw_zoo_at(i), &e), 0, "%s", e.msg);
    }
    cr_assert_null(hw_zoo_at(-1));
    cr_assert_null(hw_zoo_at(10));
}

/* ---------------------------------------------------------------------------------------- */
/* MobileNet-v2 = MAESTRO's layer list (copied from the MAESTRO reference CSV) */

Test(zoo, mobilenet_v2_matches_maestro) {
    FILE *f = fopen("tests/data/zoo/maestro_mobilenetv2_layers.csv", "r");
    cr_assert(f, "run from the repository root");
    const hw_model *m = get("mobilenet_v2");
    char line[256];
    cr_assert(fgets(line, sizeof line, f));
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        int idx, K, C, R, S, Y, X, st;
        char name[64], type[16];
        cr_assert_eq(sscanf(line, "%d,%63[^,],%15[^,],%d,%d,%d,%d,%d,%d,%d", &idx, name, type, &K, &C, &R, &S, &Y, &X, &st),
                     10, "%s", line);
        cr_assert_eq(idx, rows);
        cr_assert_lt(idx, m->n);
        const hw_layer *l = &m->layers[idx];
        cr_assert_str_eq(l->name, name);
        if (!strcmp(type, "DSCONV")) {
            /* MAESTRO writes K: 1 for DSCONV; the zoo stores K == C == groups */
            cr_assert_eq(l->op, HW_OP_DWCONV, "%s", name);
            cr_assert_eq(l->K, C);
            cr_assert_eq(l->groups, C);
        } else {
            cr_assert_eq(l->op, HW_OP_CONV, "%s", name);
            cr_assert_eq(l->K, K, "%s", name);
        }
        cr_assert_eq(l->C, C, "%s", name);
        cr_assert_eq(l->R, R, "%s", name);
        cr_assert_eq(l->S, S, "%s", name);
        cr_assert_eq(l->Y, Y, "%s", name);
        cr_assert_eq(l->X, X, "%s", name);
        cr_assert_eq(l->stride, st, "%s", name);
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, 56);
    cr_assert_eq(m->n, 56);
    /* "layer 2" = MAESTRO layer_index 2 = Bottleneck1_1_2, a 3x3 depthwise conv on 112x112x32 */
    hw_err e;
    cr_assert_eq(hw_zoo_layer_index(m, "2", &e), 2);
    cr_assert_str_eq(m->layers[2].name, "Bottleneck1_1_2");
    /* repeated name: the first occurrence is returned by name, the second is reachable by index */
    cr_assert_eq(hw_zoo_layer_index(m, "Bottleneck5_2_3", &e), 40);
    cr_assert_str_eq(m->layers[43].name, "Bottleneck5_2_3");
    cr_assert_eq(m->layers[43].K, 576);
}

Test(zoo, mobilenet_v2_edges) {
    const hw_model *m = get("mobilenet_v2");
    /* chain, with MAESTRO's "Residual" layers taking the block input as 2nd operand */
    const hw_layer *r = layer(m, "Bottleneck3_2_Residual");
    cr_assert_eq(r->n_in, 2);
    cr_assert_str_eq(m->layers[r->in[0]].name, "Bottleneck3_2_3");
    cr_assert_str_eq(m->layers[r->in[1]].name, "Bottleneck3_1_3");
    /* spatial chaining: every layer's input size is its producer's output size */
    for (int i = 1; i < m->n; i++) {
        const hw_layer *l = &m->layers[i], *p = &m->layers[l->in[0]];
        cr_assert_eq(l->Y, p->Yo, "%s", l->name);
        cr_assert_eq(l->X, p->Xo, "%s", l->name);
    }
    /* real-network output sizes via padding: 3x3 dw on 112 keeps 112; stride-2 dw halves */
    cr_assert_eq(layer(m, "Bottleneck1_1_2")->Yo, 112);
    cr_assert_eq(layer(m, "Bottleneck2_1_2")->Yo, 56);
    cr_assert_eq(layer(m, "CONV2D_3")->Yo, 1);
}

Test(zoo, vgg16_layer2) {
    const hw_model *m = get("VGG16");
    hw_err e;
    int i = hw_zoo_layer_index(m, "2", &e);
    cr_assert_eq(i, 2);
    const hw_layer *l = &m->layers[2];
    cr_assert_str_eq(l->name, "CONV3");
    cr_assert_eq(l->op, HW_OP_CONV);
    cr_assert_eq(l->K, 128);
    cr_assert_eq(l->C, 64);
    cr_assert_eq(l->Y, 112);
    cr_assert_eq(l->R, 3);
    cr_assert_eq(count_op(m, HW_OP_CONV), 13);
}

/* ---------------------------------------------------------------------------------------- */
/* Structure: output sizes, topological order, sinks, tensor shapes along edges */

Test(zoo, output_sizes_follow_padding_rule) {
    for (int k = 0; k < hw_zoo_count(); k++) {
        const hw_model *m = hw_zoo_at(k);
        for (int i = 0; i < m->n; i++) {
            const hw_layer *l = &m->layers[i];
            if (l->op != HW_OP_CONV && l->op != HW_OP_DWCONV && l->op != HW_OP_POOL) continue;
            cr_assert_eq(l->dilation, 1);
            cr_assert_eq((l->Y + 2 * l->pad - l->R) / l->stride + 1, l->Yo, "%s/%s", m->name, l->name);
            cr_assert_eq((l->X + 2 * l->pad_x - l->S) / l->stride + 1, l->Xo, "%s/%s", m->name, l->name);
        }
    }
    /* asymmetric kernels carry asymmetric padding */
    const hw_layer *l = layer(get("inception_v4"), "incB1.b3.conv2"); /* 1x7 */
    cr_assert_eq(l->R, 1);
    cr_assert_eq(l->S, 7);
    cr_assert_eq(l->pad, 0);
    cr_assert_eq(l->pad_x, 3);
    cr_assert_eq(l->Yo, 17);
    cr_assert_eq(l->Xo, 17);
}

Test(zoo, edges_are_topological_and_sinks_are_outputs) {
    for (int k = 0; k < hw_zoo_count(); k++) {
        const hw_model *m = hw_zoo_at(k);
        int *used = calloc((size_t)m->n, sizeof *used);
        for (int i = 0; i < m->n; i++) {
            const hw_layer *l = &m->layers[i];
            cr_assert(l->n_in >= 1 && l->n_in <= HW_LAYER_MAX_IN, "%s/%s", m->name, l->name);
            for (int j = 0; j < l->n_in; j++) {
                cr_assert(l->in[j] >= -1 && l->in[j] < i, "%s/%s input %d", m->name, l->name, l->in[j]);
                if (l->in[j] >= 0) used[l->in[j]] = 1;
            }
        }
        int sinks = 0;
        for (int i = 0; i < m->n; i++) sinks += !used[i];
        cr_assert_eq(sinks, strcmp(m->name, "yolov3") ? 1 : 3, "%s has %d sinks", m->name, sinks);
        cr_assert(!used[m->n - 1]);
        free(used);
    }
}

static long long elems_out(const hw_model *m, int i) { return hw_layer_output_elems(&m->layers[i]); }

Test(zoo, tensor_shapes_agree_along_edges) {
    /* graph models (pools are nodes): each consumer reads exactly what its producers write */
    const char *graphs[] = {"resnet18", "resnet50", "resnet101", "bert_base", "yolov3", "inception_v4", "mobilenet_v3"};
    for (size_t g = 0; g < sizeof graphs / sizeof graphs[0]; g++) {
        const hw_model *m = get(graphs[g]);
        for (int i = 0; i < m->n; i++) {
            const hw_layer *l = &m->layers[i];
            long long in0 = (long long)l->N * l->C * l->Y * l->X;
            if (l->op == HW_OP_EMBED) continue;
            if (l->op == HW_OP_CONCAT) {
                long long s = 0;
                for (int j = 0; j < l->n_in; j++) s += elems_out(m, l->in[j]);
                cr_assert_eq(s, in0, "%s/%s", m->name, l->name);
                continue;
            }
            for (int j = 0; j < l->n_in; j++) {
                if (l->in[j] < 0) {
                    cr_assert(i == 0 || (l->op == HW_OP_ELTWISE && j == 1), "%s/%s graph input", m->name, l->name);
                    continue;
                }
                long long p = elems_out(m, l->in[j]);
                if (j == 0 && !strcmp(l->name, "pooler.dense")) /* reads the [CLS] row only */
                    cr_assert_eq(p, 128 * in0, "%s/%s", m->name, l->name);
                else if (j == 0)
                    cr_assert_eq(p, in0, "%s/%s input 0: %lld vs %lld", m->name, l->name, p, in0);
                else if (l->op == HW_OP_MATMUL)
                    cr_assert_eq(p, (long long)l->N * l->C * l->K, "%s/%s B operand", m->name, l->name);
                else if (l->op == HW_OP_CONV) /* fused residual add: shortcut has the output shape */
                    cr_assert_eq(p, hw_layer_output_elems(l), "%s/%s shortcut", m->name, l->name);
                else /* eltwise: same shape, or a per-channel scale (SE) */
                    cr_assert(p == in0 || p == (long long)l->N * l->C, "%s/%s input %d", m->name, l->name, j);
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Arithmetic, by hand */

Test(zoo, macs_by_hand) {
    /* MobileNet-v2 layer 2: depthwise 3x3 over 32 channels, 112x112 out: 32*9*112*112 */
    cr_assert_eq(hw_layer_macs(&get("mobilenet_v2")->layers[2]), 32LL * 9 * 112 * 112);
    cr_assert_eq(hw_layer_weight_elems(&get("mobilenet_v2")->layers[2]), 32 * 9);
    /* VGG16 layer 2 (CONV3): 128*64*3*3*112*112 = 924,844,032 */
    cr_assert_eq(hw_layer_macs(&get("vgg16")->layers[2]), 924844032LL);
    /* ResNet-50 conv1: 64*3*7*7*112*112 = 118,013,952 */
    const hw_model *r = get("resnet50");
    cr_assert_eq(hw_layer_macs(layer(r, "conv1")), 118013952LL);
    cr_assert_eq(hw_layer_macs(layer(r, "fc")), 2048000LL);
    cr_assert_eq(hw_layer_macs(layer(r, "maxpool")), 0);
    cr_assert_eq(hw_layer_ops(layer(r, "maxpool")), 64LL * 56 * 56 * 9);
    cr_assert_eq(hw_layer_input_elems(layer(r, "conv1")), 3LL * 224 * 224);
    cr_assert_eq(hw_layer_output_elems(layer(r, "conv1")), 64LL * 112 * 112);
    /* BERT: Q projection 128 tokens x 768 x 768; scores 12 heads x 128 x 128 x 64 */
    const hw_model *b = get("bert");
    cr_assert_eq(hw_layer_macs(layer(b, "layer0.q.matmul")), 128LL * 768 * 768);
    cr_assert_eq(hw_layer_weight_elems(layer(b, "layer0.q.matmul")), 768LL * 768);
    cr_assert_eq(hw_layer_macs(layer(b, "layer0.scores.matmul")), 12LL * 128 * 128 * 64);
    cr_assert_eq(hw_layer_weight_elems(layer(b, "layer0.scores.matmul")), 0);
    cr_assert_eq(hw_layer_input_elems(layer(b, "layer0.scores.matmul")), 2LL * 128 * 768);
    cr_assert_eq(hw_layer_output_elems(layer(b, "layer11.ffn1.gelu")), 128LL * 3072);
    /* grouped conv: weights and MACs divide by groups */
    hw_layer g = {.name = "g", .op = HW_OP_CONV, .N = 1, .K = 8, .C = 4, .R = 3, .S = 3, .Y = 5, .X = 5, .Yo = 3,
                  .Xo = 3, .stride = 1, .dilation = 1, .groups = 2, .n_in = 1, .in = {-1}};
    cr_assert_eq(hw_layer_weight_elems(&g), 8 * 2 * 9);
    cr_assert_eq(hw_layer_macs(&g), 8LL * 2 * 9 * 9);
}

static long long total(const hw_model *m, long long (*f)(const hw_layer *)) {
    long long s = 0;
    for (int i = 0; i < m->n; i++) s += f(&m->layers[i]);
    return s;
}

Test(zoo, model_totals_match_published_parameter_counts) {
    /* Published totals minus what the zoo does not store (biases, BatchNorm):
     * torchvision resnet50 25,557,032 - 26,560*2 BN - 1000 fc bias = 25,502,912
     * torchvision resnet18 11,689,512 - 4,800*2 BN - 1000 = 11,678,912
     * torchvision vgg16 138,357,544 - 13,416 biases = 138,344,128
     * AlexNet (single tower) 62,378,344 - 10,568 biases = 62,367,776
     * HF bert-base-uncased BertModel 109,482,240 - 83,712 biases = 109,398,528 */
    cr_assert_eq(total(get("resnet50"), hw_layer_weight_elems), 25502912LL);
    cr_assert_eq(total(get("resnet18"), hw_layer_weight_elems), 11678912LL);
    cr_assert_eq(total(get("vgg16"), hw_layer_weight_elems), 138344128LL);
    cr_assert_eq(total(get("alexnet"), hw_layer_weight_elems), 62367776LL);
    cr_assert_eq(total(get("bert_base"), hw_layer_weight_elems), 109398528LL);
    /* torchvision resnet101 44,549,160 - 52,672*2 BN - 1000 = 44,442,816;
     * torchvision mobilenet_v3_large 5,483,032 - 31,760 (BN + SE/classifier biases) = 5,451,272;
     * timm inception_v4 42,679,816 - 31,584*2 BN - 1000 fc bias = 42,615,648 */
    cr_assert_eq(total(get("resnet101"), hw_layer_weight_elems), 44442816LL);
    cr_assert_eq(total(get("mobilenet_v3"), hw_layer_weight_elems), 5451272LL);
    cr_assert_eq(total(get("inception_v4"), hw_layer_weight_elems), 42615648LL);
    /* Keras YOLOv3: 62,001,757 total - 26,304*4 BN - 3*255 head biases = 61,895,776 */
    cr_assert_eq(total(get("yolov3"), hw_layer_weight_elems), 61895776LL);
    /* MAC totals against the usual figures (GMACs): ResNet-50 4.09, VGG16 15.47, ResNet-101
     * 7.80, MobileNet-v3-L 0.217 (paper: 219M), YOLOv3-416 32.9 (darknet: 65.86 BFLOPs). */
    long long r50 = total(get("resnet50"), hw_layer_macs);
    cr_assert(r50 > 4080000000LL && r50 < 4100000000LL, "%lld", r50);
    long long v = total(get("vgg16"), hw_layer_macs);
    cr_assert(v > 15460000000LL && v < 15480000000LL, "%lld", v);
    long long r101 = total(get("resnet101"), hw_layer_macs);
    cr_assert(r101 > 7790000000LL && r101 < 7810000000LL, "%lld", r101);
    long long m3 = total(get("mobilenet_v3"), hw_layer_macs);
    cr_assert(m3 > 210000000LL && m3 < 225000000LL, "%lld", m3);
    long long y = total(get("yolov3"), hw_layer_macs);
    cr_assert(y > 32800000000LL && y < 33100000000LL, "%lld", y);
}

/* ---------------------------------------------------------------------------------------- */
/* Lookup */

Test(zoo, alias_lookup) {
    const char *mv2[] = {"mobilenet_v2", "mobilenetv2", "MobileNet-v2", "MOBILENET_V2", "mobilenet v2"};
    for (size_t i = 0; i < 5; i++) cr_assert_str_eq(get(mv2[i])->name, "mobilenet_v2", "%s", mv2[i]);
    cr_assert_str_eq(get("resnet50")->name, "resnet50");
    cr_assert_str_eq(get("ResNet-50")->name, "resnet50");
    cr_assert_str_eq(get("ResNet-101")->name, "resnet101");
    cr_assert_str_eq(get("resnet_18")->name, "resnet18");
    cr_assert_str_eq(get("vgg16")->name, "vgg16");
    cr_assert_str_eq(get("VGG-16")->name, "vgg16");
    cr_assert_str_eq(get("bert")->name, "bert_base");
    cr_assert_str_eq(get("bert-base")->name, "bert_base");
    cr_assert_str_eq(get("BERT-Base")->name, "bert_base");
    cr_assert_str_eq(get("YOLOv3")->name, "yolov3");
    cr_assert_str_eq(get("Inception-v4")->name, "inception_v4");
    cr_assert_str_eq(get("MobileNet-v3")->name, "mobilenet_v3");
    cr_assert_str_eq(get("mobilenet_v3_large")->name, "mobilenet_v3");
    cr_assert_str_eq(get("AlexNet")->name, "alexnet");
    cr_assert_null(hw_zoo_find("resnet"));
    cr_assert_null(hw_zoo_find("mobilenet"));
    cr_assert_null(hw_zoo_find(""));
    cr_assert_null(hw_zoo_find("-"));
    cr_assert_null(hw_zoo_find(NULL));
}

Test(zoo, layer_index_by_name_or_number) {
    const hw_model *m = get("resnet50");
    hw_err e;
    cr_assert_eq(hw_zoo_layer_index(m, "0", &e), 0);
    cr_assert_eq(hw_zoo_layer_index(m, "56", &e), 56);
    cr_assert_str_eq(m->layers[hw_zoo_layer_index(m, "layer1.0.conv2", &e)].name, "layer1.0.conv2");
    cr_assert_str_eq(m->layers[hw_zoo_layer_index(m, "LAYER1.0.CONV2", &e)].name, "layer1.0.conv2");
}

Test(zoo, unknown_layer_errors_name_field_and_model) {
    const hw_model *m = get("mobilenet_v2");
    hw_err e;
    cr_assert_eq(hw_zoo_layer_index(m, "56", &e), -1);
    cr_assert_eq(e.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(e.msg, "config.layer: ") == e.msg, "%s", e.msg);
    cr_assert(strstr(e.msg, "mobilenet_v2") && strstr(e.msg, "0..55"), "%s", e.msg);
    cr_assert_eq(hw_zoo_layer_index(m, "-1", &e), -1);
    cr_assert(strstr(e.msg, "config.layer: "), "%s", e.msg);
    cr_assert_eq(hw_zoo_layer_index(m, "99999999999999999999", &e), -1);
    cr_assert_eq(hw_zoo_layer_index(m, "conv7", &e), -1);
    cr_assert_eq(e.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(e.msg, "config.layer: ") == e.msg, "%s", e.msg);
    cr_assert(strstr(e.msg, "'conv7'") && strstr(e.msg, "mobilenet_v2"), "%s", e.msg);
    cr_assert_eq(hw_zoo_layer_index(m, "", &e), -1);
    cr_assert(strstr(e.msg, "config.layer: "), "%s", e.msg);
    cr_assert_eq(hw_zoo_layer_index(m, NULL, &e), -1);
}

Test(zoo, op_names) {
    for (int i = 0; i < HW_OP_COUNT; i++) cr_assert_eq(hw_op_from_name(hw_op_name((hw_op)i)), i);
    cr_assert_str_eq(hw_op_name(HW_OP_DWCONV), "dwconv");
    cr_assert_eq(hw_op_from_name("DSCONV"), HW_OP_DWCONV);
    cr_assert_eq(hw_op_from_name("GEMM"), HW_OP_FC);
    cr_assert_eq(hw_op_from_name("nope"), -1);
    cr_assert_str_eq(hw_op_name(HW_OP_COUNT), "?");
}

/* ---------------------------------------------------------------------------------------- */
/* File format */

static void assert_same_model(const hw_model *a, const hw_model *b) {
    cr_assert_str_eq(a->name, b->name);
    cr_assert_eq(a->n, b->n, "%s: %d vs %d layers", a->name, a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const hw_layer *x = &a->layers[i], *y = &b->layers[i];
        cr_assert_str_eq(x->name, y->name);
        int same = x->op == y->op && x->N == y->N && x->K == y->K && x->C == y->C && x->R == y->R && x->S == y->S &&
                   x->Y == y->Y && x->X == y->X && x->Yo == y->Yo && x->Xo == y->Xo && x->stride == y->stride &&
                   x->pad == y->pad && x->pad_x == y->pad_x && x->dilation == y->dilation && x->groups == y->groups &&
                   x->n_in == y->n_in;
        for (int j = 0; same && j < x->n_in; j++) same = x->in[j] == y->in[j];
        cr_assert(same, "%s layer %d (%s) differs", a->name, i, x->name);
    }
}

Test(zoo, write_load_round_trip) {
    char path[] = "/tmp/hwgym_zoo_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    for (int k = 0; k < hw_zoo_count(); k++) {
        hw_err e;
        cr_assert_eq(hw_zoo_write_file(hw_zoo_at(k), path, &e), 0, "%s", e.msg);
        hw_model *m = hw_zoo_load_file(path, &e);
        cr_assert(m, "%s", e.msg);
        assert_same_model(hw_zoo_at(k), m);
        hw_zoo_free(m);
    }
    unlink(path);
}

Test(zoo, shipped_csv_files_equal_builtin_tables) {
    for (int k = 0; k < hw_zoo_count(); k++) {
        char path[256];
        snprintf(path, sizeof path, "envs/common/zoo/%s.csv", hw_zoo_at(k)->name);
        hw_err e;
        hw_model *m = hw_zoo_load_file(path, &e);
        cr_assert(m, "%s", e.msg);
        assert_same_model(hw_zoo_at(k), m);
        hw_zoo_free(m);
    }
}

static char tmp_path[64];

static hw_model *load_text(const char *text, hw_err *e) {
    strcpy(tmp_path, "/tmp/hwgym_zoo_XXXXXX");
    int fd = mkstemp(tmp_path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    hw_model *m = hw_zoo_load_file(tmp_path, e);
    unlink(tmp_path);
    return m;
}

#define HDR "name,op,N,K,C,R,S,Y,X,Yo,Xo,stride,pad,dilation,groups,inputs\n"

Test(zoo, load_user_file_with_defaults_and_names) {
    hw_err e;
    hw_model *m = load_text("# model: tiny\n"
                            "# a comment\n"
                            "\n"
                            "name, op, N, K, C, R, S, Y, X, Yo, Xo, stride, pad, dilation, groups, inputs\r\n"
                            "c1,conv,1,16,3,3,3,32,32,,,2,1,1,1,\n"
                            "dw,DSCONV,,16,16,3,3,16,16,,,,1,,,c1\n"
                            "pw,conv,1,32,16,1,1,16,16,16,16,1,0,1,1,dw\n"
                            "sc,conv,1,32,3,1,1,32,32,,,2,0,1,1,input\n"
                            "add,eltwise,1,32,32,1,1,16,16,,,1,0,1,1,pw;sc\n"
                            "fc,gemm,1,10,8192,1,1,1,1,1,1,1,0,1,1,4\n",
                            &e);
    cr_assert(m, "%s", e.msg);
    cr_assert_str_eq(m->name, "tiny");
    cr_assert_eq(m->n, 6);
    cr_assert_eq(m->layers[0].Yo, 16); /* (32+2-3)/2+1 */
    cr_assert_eq(m->layers[0].n_in, 1);
    cr_assert_eq(m->layers[0].in[0], -1); /* empty inputs on row 0 = graph input */
    cr_assert_eq(m->layers[1].op, HW_OP_DWCONV);
    cr_assert_eq(m->layers[1].groups, 16); /* default groups of a dwconv = C */
    cr_assert_eq(m->layers[1].N, 1);
    cr_assert_eq(m->layers[1].stride, 1);
    cr_assert_eq(m->layers[1].in[0], 0);
    cr_assert_eq(m->layers[3].in[0], -1);
    cr_assert_eq(m->layers[4].n_in, 2);
    cr_assert_eq(m->layers[4].in[0], 2);
    cr_assert_eq(m->layers[4].in[1], 3);
    cr_assert_eq(m->layers[5].op, HW_OP_FC);
    cr_assert_eq(m->layers[5].in[0], 4);
    cr_assert_eq(hw_layer_macs(&m->layers[5]), 81920);
    hw_zoo_free(m);

    /* minimal header: only the required columns; inputs default to a chain */
    m = load_text("name,op,K,C,Y,X,R,S,pad\nl0,conv,8,3,8,8,3,3,1\nl1,conv,8,8,8,8,3,3,1\n", &e);
    cr_assert(m, "%s", e.msg);
    cr_assert(strncmp(m->name, "hwgym_zoo_", 10) == 0, "model name defaults to the file name: %s", m->name);
    cr_assert_eq(m->layers[1].in[0], 0);
    cr_assert_eq(m->layers[1].Yo, 8);
    hw_zoo_free(m);

    /* duplicate names: a name reference means the most recent earlier layer of that name */
    m = load_text(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1,\na,conv,1,4,4,1,1,4,4,,,1,0,1,1,\nb,eltwise,1,4,4,1,1,4,4,,,1,0,1,1,a\n", &e);
    cr_assert(m, "%s", e.msg);
    cr_assert_eq(m->layers[2].in[0], 1);
    hw_zoo_free(m);
}

static void expect_load_error(const char *text, const char *what1, const char *what2) {
    hw_err e;
    hw_model *m = load_text(text, &e);
    cr_assert_null(m, "accepted: %s", text);
    cr_assert_eq(e.code, HW_E_BAD_CONFIG, "%s", e.msg);
    cr_assert(strstr(e.msg, tmp_path), "no path in: %s", e.msg);
    cr_assert(strstr(e.msg, what1), "'%s' not in: %s", what1, e.msg);
    if (what2) cr_assert(strstr(e.msg, what2), "'%s' not in: %s", what2, e.msg);
}

Test(zoo, load_errors_name_line_and_field) {
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1,\nb,convolution,1,4,4,1,1,4,4,,,1,0,1,1,\n", ":3:", "field 'op'");
    expect_load_error("#c\n" HDR "a,conv,1,x4,4,1,1,4,4,,,1,0,1,1,\n", ":3:", "field 'K'");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,3,,1,0,1,1,\n", ":2:", "field 'Yo'");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,0,0,1,1,\n", ":2:", "field 'stride'");
    expect_load_error(HDR "a,dwconv,1,8,4,3,3,4,4,,,1,1,1,4,\n", ":2:", "field 'groups'");
    expect_load_error(HDR "a,conv,1,4,4,9,9,4,4,,,1,0,1,1,\n", ":2:", "field 'R'");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1,\nb,conv,1,4,4,1,1,4,4,,,1,0,1,1,zz\n", ":3:", "no earlier layer named 'zz'");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1,1\n", ":2:", "field 'inputs'");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1,-1;-1;-1;-1;-1\n", ":2:", "more than 4");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1\n", ":2:", "expected 16 fields");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,4,,,1,0,1,1,,,\n", ":2:", "expected 16 fields");
    expect_load_error("name,op,N,K,C,R,S,Y,X,colour\n", ":1:", "unknown column 'colour'");
    expect_load_error("name,op,N,K,C,R,S,Y\n", ":1:", "missing column 'X'");
    expect_load_error("name,op,K,K,C,Y,X\n", ":1:", "column 'K' twice");
    expect_load_error(HDR, "no layers", NULL);
    expect_load_error("# only a comment\n", "no header", NULL);
    expect_load_error(HDR ",conv,1,4,4,1,1,4,4,,,1,0,1,1,\n", ":2:", "field 'name'");
    expect_load_error(HDR "a,fc,1,4,4,3,3,1,1,,,1,0,1,1,\n", ":2:", "field 'R'");
    expect_load_error(HDR "a,eltwise,1,4,8,1,1,4,4,,,1,0,1,1,\n", ":2:", "field 'K'");
    expect_load_error(HDR "a,conv,1,4,4,1,1,4,99999999999,,,1,0,1,1,\n", ":2:", "field 'X'");

    hw_err e;
    cr_assert_null(hw_zoo_load_file("/nonexistent/zoo.csv", &e));
    cr_assert_eq(e.code, HW_E_BAD_CONFIG);
    cr_assert(strstr(e.msg, "/nonexistent/zoo.csv") && strstr(e.msg, "cannot open"), "%s", e.msg);
    cr_assert_null(hw_zoo_load_file(NULL, &e));
    hw_zoo_free(NULL);
    hw_zoo_free((hw_model *)hw_zoo_at(0)); /* built-ins are never freed */
    cr_assert_eq(hw_zoo_at(0)->n, 56);
}

Test(zoo, byte_order_mark_and_layer_named_input) {
    hw_err e;
    hw_model *m = load_text("\xEF\xBB\xBF" HDR "input,conv,1,4,4,1,1,4,4,,,1,0,1,1,\nb,eltwise,1,4,4,1,1,4,4,,,1,0,1,1,input\n", &e);
    cr_assert(m, "%s", e.msg);
    cr_assert_eq(m->layers[1].in[0], 0); /* an earlier layer called "input" wins over the keyword */
    hw_zoo_free(m);
}

/* Corrupted files never crash or leak (run under ASan): every load either fails with a
 * message naming the file or returns a model that validates. */
Test(zoo, mutated_files_fail_cleanly) {
    FILE *f = fopen("envs/common/zoo/resnet18.csv", "rb");
    cr_assert(f);
    static char orig[8192], buf[8192];
    size_t n = fread(orig, 1, sizeof orig - 1, f);
    fclose(f);
    cr_assert_gt(n, 100);
    const char alphabet[] = ",;\n#-0123456789abcXY \r";
    unsigned long long s = 12345;
    int ok = 0, bad = 0;
    for (int it = 0; it < 400; it++) {
        memcpy(buf, orig, n);
        size_t len = n;
        int edits = 1 + it % 4;
        for (int k = 0; k < edits; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(s >> 33) % len;
            int kind = (int)((s >> 20) % 3);
            char ch = alphabet[(s >> 8) % (sizeof alphabet - 1)];
            if (kind == 0) buf[pos] = ch;                                       /* replace */
            else if (kind == 1 && len > 1) memmove(buf + pos, buf + pos + 1, --len - pos); /* delete */
            else if (len + 1 < sizeof buf) { memmove(buf + pos + 1, buf + pos, len - pos); buf[pos] = ch; len++; }
        }
        buf[len] = 0;
        hw_err e;
        hw_model *m = load_text(buf, &e);
        if (m) {
            cr_assert_eq(hw_zoo_validate(m, &e), 0, "%s", e.msg);
            hw_zoo_free(m);
            ok++;
        } else {
            cr_assert(strstr(e.msg, tmp_path), "%s", e.msg);
            bad++;
        }
    }
    cr_assert_gt(bad, 100); /* the mutations do hit the validator */
    cr_assert_gt(ok, 0);
}

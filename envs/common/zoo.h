/* zoo.h - the workload zoo: DNN layer tables and layer graphs shared by every env family.
 * Owns: the built-in models (MobileNet-v2, VGG16, ResNet18, ResNet-50, AlexNet, ResNet-101,
 * BERT-base, YOLOv3, Inception-v4, MobileNet-v3), lookup of a model and of a layer by name or
 * index, and loading a user's own model file in the same documented format (docs/zoo.md).
 *
 * Conventions (MAESTRO's): Y and X are the INPUT rows/columns of a layer; Yo/Xo its output.
 * K = output channels, C = input channels, R x S = filter rows x cols, N = batch.
 * A depthwise layer has K == C == groups. FC/GEMM layers use Y=X=R=S=1 (GEMM M -> N or Y).
 * Edges: in[] lists producer layer indices (-1 = graph input); they follow tensor connectivity,
 * so placement/mmap can derive liveness. */
#ifndef HW_ZOO_H
#define HW_ZOO_H

#include <stddef.h>

#include "hw_error.h"

typedef enum hw_op {
    HW_OP_CONV = 0,  /* dense convolution (incl. pointwise 1x1) */
    HW_OP_DWCONV,    /* depthwise convolution */
    HW_OP_FC,        /* fully connected / GEMM with weights */
    HW_OP_MATMUL,    /* activation x activation matmul (attention) */
    HW_OP_POOL,
    HW_OP_ELTWISE,   /* add, mul, activation functions kept as separate nodes */
    HW_OP_SOFTMAX,
    HW_OP_NORM,      /* layernorm / batchnorm kept as a node */
    HW_OP_CONCAT,
    HW_OP_UPSAMPLE,
    HW_OP_EMBED,
    HW_OP_COUNT
} hw_op;

#define HW_LAYER_MAX_IN 4

typedef struct hw_layer {
    char name[64];
    hw_op op;
    int N, K, C, R, S, Y, X;  /* X, Y: input spatial size */
    int Yo, Xo;               /* output spatial size */
    int stride, pad, dilation, groups;
    int n_in;
    int in[HW_LAYER_MAX_IN];  /* producer indices; -1 = graph input */
    int pad_x;                /* (added) column padding; `pad` is the row padding. Equal to pad
                               * except for asymmetric kernels such as Inception's 1x7. */
} hw_layer;

typedef struct hw_model {
    const char *name;         /* "mobilenet_v2" */
    int n;
    const hw_layer *layers;
} hw_model;

const char *hw_op_name(hw_op op);
int hw_zoo_count(void);
const hw_model *hw_zoo_at(int i);
/* Case-insensitive; accepts aliases such as "mobilenetv2", "MobileNet-v2", "resnet50". */
const hw_model *hw_zoo_find(const char *name);
/* A layer by name or by decimal index; -1 with HW_E_BAD_CONFIG naming it when absent. */
int hw_zoo_layer_index(const hw_model *m, const char *name_or_index, hw_err *err);
/* Weight and MAC counts used by several envs. */
long long hw_layer_macs(const hw_layer *l);
long long hw_layer_weight_elems(const hw_layer *l);
long long hw_layer_input_elems(const hw_layer *l);
long long hw_layer_output_elems(const hw_layer *l);
/* A user's model file (format in docs/zoo.md); free with hw_zoo_free. */
hw_model *hw_zoo_load_file(const char *path, hw_err *err);
/* The same format from text (an env reads the file through hw_files.h first, or gets it inline);
 * `name` names the model (up to the first '.') and prefixes errors. */
hw_model *hw_zoo_parse(const char *text, size_t len, const char *name, hw_err *err);
void hw_zoo_free(hw_model *m);

/* (added) Elementary operation count: MACs for CONV/DWCONV/FC/MATMUL; for the other ops one op
 * per window element (POOL) or per output element (ELTWISE, SOFTMAX, NORM, CONCAT, UPSAMPLE,
 * EMBED). hw_layer_macs is 0 for ops without multiply-accumulates. */
long long hw_layer_ops(const hw_layer *l);
/* (added) Checks one layer / a whole model (dims, output sizes, edges in topological order);
 * -1 with HW_E_BAD_CONFIG naming the layer and field. */
int hw_layer_validate(const hw_layer *l, int index, hw_err *err);
int hw_zoo_validate(const hw_model *m, hw_err *err);
/* (added) Writes a model in the zoo file format; -1 with HW_E_IO on failure. */
int hw_zoo_write_file(const hw_model *m, const char *path, hw_err *err);
/* (added) Parses an op name ("conv", "dwconv", also "dsconv", "gemm", ...); -1 if unknown. */
int hw_op_from_name(const char *name);

#endif

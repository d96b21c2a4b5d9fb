/* cluster.h - the MARL DNN-mapping paper's Algorithm 1 (agent assignment by correlation
 * clustering), used by `hwgym cluster` (cmd_cluster.c) and by tests.
 * Owns: Pearson correlation of parameter columns, agglomerative clustering with average
 * linkage (UPGMA) on the distance 1-|r|, cutting the tree into B clusters or at a threshold,
 * the text dendrogram, the SVG figure (heatmap + dendrogram, like the paper's Figure 4) and
 * the assignment JSON that hwgym-marl reads:
 *   {"agents":[{"name":"a0","dims":[0,3],"params":["loop_order","tile_C"]},...], ...}
 * All functions are pure (no globals); n (parameters) is at most HWCL_MAX_PARAMS. */
#ifndef HWCL_CLUSTER_H
#define HWCL_CLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hw_error.h"

#define HWCL_MAX_PARAMS 64

/* One merge of the agglomeration. Nodes 0..n-1 are the parameters; merge i creates node n+i
 * from nodes a and b (a < b) at height `dist` (average 1-|r| between their members). */
typedef struct hwcl_merge {
    int a, b;
    double dist;
    int size;
} hwcl_merge;

/* Pearson r between the columns of `data` (rows x cols, row-major) into corr (cols x cols),
 * computed with gsl_stats_correlation. A constant column has no defined r: it gets r = 0 with
 * every other column (and 1 with itself). rows >= 2. */
int hwcl_pearson(const double *data, size_t rows, int cols, double *corr, hw_err *err);

/* Distance matrix d = 1 - |r| (n x n). */
void hwcl_distance(const double *corr, int n, double *dist);

/* Average-linkage agglomeration of n items with distance matrix dist (n x n). Fills n-1
 * merges. Ties are broken by the lowest (a, b) node pair, so the result is deterministic. */
int hwcl_linkage(const double *dist, int n, hwcl_merge *merges, hw_err *err);

/* Cluster labels (0-based, numbered by each cluster's lowest parameter index) after cutting
 * the tree: k > 0 keeps k clusters (applies the first n-k merges); k <= 0 applies every merge
 * with height <= threshold. Returns the number of clusters. */
int hwcl_cut(const hwcl_merge *merges, int n, int k, double threshold, int *labels);

/* Leaf order of the dendrogram (for drawing): order[0..n-1]. */
void hwcl_leaf_order(const hwcl_merge *merges, int n, int *order);

/* The dendrogram as an indented text tree. */
void hwcl_print_dendrogram(FILE *f, const hwcl_merge *merges, int n, const char *const *names);

/* Figure 4: correlation heatmap (parameter order) and the dendrogram (leaf order), with the
 * cut drawn at `cut_height` (< 0: none). */
int hwcl_write_svg(FILE *f, const double *corr, int n, const char *const *names, const hwcl_merge *merges,
                   double cut_height, const char *title);

/* {"agents":[{"name":"a<j>","dims":[...],"params":[...]}]} for labels with k clusters. */
json_t *hwcl_assignment_json(const int *labels, int n, int k, const char *const *names);

/* Parses an assignment: the "agents" list with names and dims that partition 0..n-1 (n = the
 * action elements). Returns a new reference to a normalised list [{"name","dims"}] or NULL
 * with an error naming the bad field. n <= 0 skips the partition check. */
json_t *hwcl_assignment_parse(const json_t *j, int n, hw_err *err);

/* Height at which cutting gives k clusters (midpoint between merges n-k-1 and n-k). */
double hwcl_cut_height(const hwcl_merge *merges, int n, int k);

#endif

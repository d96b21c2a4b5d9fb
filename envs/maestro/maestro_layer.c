/* maestro_layer.c - the public descriptions of the MAESTRO model's inputs: dimension names (in
 * CONV and GEMM vocabularies), layer initialisation and Y'/X' derivation, and the default
 * hardware (MAESTRO's defaults and its per-access energy table). */
#include <stdio.h>
#include <string.h>

#include "maestro.h"

static const char *const dim_names[MD_NDIM] = {"N", "K", "C", "R", "S", "Y", "X", "Y'", "X'", "G"};

const char *maestro_dim_name(int d) { return (d >= 0 && d < MD_NDIM) ? dim_names[d] : "?"; }

const char *maestro_dim_name_for(int d, maestro_ltype t) {
    if (t == MAESTRO_GEMM) {
        if (d == MD_Y) return "M";
        if (d == MD_K) return "N";
        if (d == MD_C) return "K";
    }
    return maestro_dim_name(d);
}

int maestro_dim_from_name(const char *s) {
    for (int i = 0; i < MD_NDIM; i++)
        if (strcmp(s, dim_names[i]) == 0) return i;
    return -1;
}

void maestro_layer_init(maestro_layer *l, maestro_ltype type, const char *name) {
    memset(l, 0, sizeof *l);
    l->type = type;
    snprintf(l->name, sizeof l->name, "%s", name ? name : "layer");
    for (int i = 0; i < MD_NDIM; i++) l->dim[i] = 1;
    l->stride_x = l->stride_y = 1;
}

void maestro_layer_finish(maestro_layer *l) {
    l->dim[MD_YP] = l->dim[MD_Y] - l->dim[MD_R] + 1;
    l->dim[MD_XP] = l->dim[MD_X] - l->dim[MD_S] + 1;
}

void maestro_hw_default(maestro_hw *h) {
    memset(h, 0, sizeof *h);
    h->num_pes = 64;
    h->simd = 1;
    h->l1_size = 512;
    h->l2_size = 108000;
    h->noc_bw = 32;
    h->noc_latency = 1;
    h->offchip_bw = 32;
    h->e_l1 = 1.68;
    h->e_l2 = 18.61;
    h->e_mac = 1.0;
    h->mac_energy_nj = 0.00023;
}

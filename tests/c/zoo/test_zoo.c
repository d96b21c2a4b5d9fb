/* Tests of the workload zoo (envs/common/zoo.h): built-in models, lookup, arithmetic, file format. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/zoo.h"

static const hw_model *get(const char *name) {
    const hw_model *m = hw_zoo_find(name);
    cr_assert(m, "model %s missing", name);
    return m;
}

Test(zoo, egrl_node_counts) {
    cr_assert_eq(get("resnet50")->n, 57);
    cr_assert_eq(get("resnet101")->n, 108);
    cr_assert_eq(get("bert_base")->n, 376);
}

Test(zoo, all_builtins_validate) {
    cr_assert_eq(hw_zoo_count(), 10);
    for (int i = 0; i < hw_zoo_count(); i++) {
        hw_err e;
        cr_assert_eq(hw_zoo_validate(hw_zoo_at(i), &e), 0, "%s", e.msg);
    }
}

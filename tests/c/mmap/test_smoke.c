#include <criterion/criterion.h>
#include "mmap/mmap.h"
Test(mmap_smoke, loads) {
    hw_err err;
    mm_problem *p = mm_dataset_load("mlp_train_batch_16", 0, &err);
    cr_assert(p, "%s", err.msg);
    mm_problem_free(p);
}

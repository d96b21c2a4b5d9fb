/* sched_builtin.c - the built-in accelerator descriptions, embedded so binaries work from any
 * directory. Generated from envs/sched/accelerators/NAME.json (tests/c/sched checks they match):
 *   for f in eyeriss_v1 eyeriss_v2 tpu_v3 simba tpu_v3_vmem; do ...; done (see docs/sched.md). */
#include "sched.h"

static const char *const names[] = {"eyeriss_v1", "eyeriss_v2", "tpu_v3", "simba", "tpu_v3_vmem"};
static const char *const texts[] = {
    "{\n"
    "  \"name\": \"eyeriss_v1\",\n"
    "  \"word_bytes\": 2,\n"
    "  \"mac\": {\"x\": 1, \"y\": 1, \"energy_pj\": 1.0},\n"
    "  \"local_buffer\": {\"I\": 14, \"W\": 448, \"O\": 48, \"dataflow\": \"WS\"},\n"
    "  \"pe_array\": {\"x\": 14, \"y\": 12, \"energy_pj\": 0.5},\n"
    "  \"global_buffer\": {\"bytes\": 110592, \"dataflow\": \"OS\", \"bandwidth\": 16},\n"
    "  \"chips\": {\"x\": 1, \"y\": 1},\n"
    "  \"dram\": {\"dataflow\": \"OS\", \"bandwidth\": 4, \"energy_pj\": 128.0}\n"
    "}\n"
    ,
    "{\n"
    "  \"name\": \"eyeriss_v2\",\n"
    "  \"word_bytes\": 2,\n"
    "  \"mac\": {\"x\": 2, \"y\": 1, \"energy_pj\": 1.0},\n"
    "  \"local_buffer\": {\"I\": 24, \"W\": 288, \"O\": 80, \"dataflow\": \"WS\"},\n"
    "  \"pe_array\": {\"x\": 4, \"y\": 3, \"energy_pj\": 0.5},\n"
    "  \"global_buffer\": {\"bytes\": 12288, \"dataflow\": \"OS\", \"bandwidth\": 8},\n"
    "  \"chips\": {\"x\": 2, \"y\": 8, \"energy_pj\": 2.0},\n"
    "  \"dram\": {\"dataflow\": \"OS\", \"bandwidth\": 8, \"energy_pj\": 128.0}\n"
    "}\n"
    ,
    "{\n"
    "  \"name\": \"tpu_v3\",\n"
    "  \"word_bytes\": 2,\n"
    "  \"mac\": {\"x\": 1, \"y\": 1, \"energy_pj\": 1.0},\n"
    "  \"registers\": {\"W\": 2, \"dataflow\": \"WS\"},\n"
    "  \"local_buffer\": {\"I\": 8192, \"W\": 32768, \"O\": 3072, \"dataflow\": \"WS\"},\n"
    "  \"pe_array\": {\"x\": 256, \"y\": 128, \"energy_pj\": 0.5},\n"
    "  \"global_buffer\": {\"bytes\": 33554432, \"dataflow\": \"OS\", \"bandwidth\": 1024},\n"
    "  \"chips\": {\"x\": 2, \"y\": 4, \"energy_pj\": 20.0},\n"
    "  \"dram\": {\"dataflow\": \"OS\", \"bandwidth\": 3840, \"energy_pj\": 128.0}\n"
    "}\n"
    ,
    "{\n"
    "  \"name\": \"simba\",\n"
    "  \"word_bytes\": 2,\n"
    "  \"mac\": {\"x\": 8, \"y\": 8, \"energy_pj\": 1.0},\n"
    "  \"registers\": {\"W\": 2, \"dataflow\": \"WS\"},\n"
    "  \"local_buffer\": {\"I\": 4096, \"W\": 8192, \"O\": 2048, \"dataflow\": \"WS\"},\n"
    "  \"pe_array\": {\"x\": 4, \"y\": 4, \"energy_pj\": 0.5},\n"
    "  \"global_buffer\": {\"bytes\": 65536, \"dataflow\": \"OS\", \"bandwidth\": 32},\n"
    "  \"chips\": {\"x\": 6, \"y\": 6, \"energy_pj\": 20.0},\n"
    "  \"dram\": {\"dataflow\": \"OS\", \"bandwidth\": 32, \"energy_pj\": 128.0}\n"
    "}\n"
    ,
    "{\n"
    "  \"name\": \"tpu_v3_vmem\",\n"
    "  \"word_bytes\": 2,\n"
    "  \"mac\": {\"x\": 1, \"y\": 1, \"energy_pj\": 1.0},\n"
    "  \"registers\": {\"W\": 2, \"dataflow\": \"WS\"},\n"
    "  \"pe_array\": {\"x\": 256, \"y\": 128, \"energy_pj\": 0.5},\n"
    "  \"global_buffer\": {\"bytes\": 16777216, \"dataflow\": \"OS\", \"bandwidth\": 1024},\n"
    "  \"chips\": {\"x\": 2, \"y\": 8, \"energy_pj\": 20.0},\n"
    "  \"dram\": {\"dataflow\": \"OS\", \"bandwidth\": 3840, \"energy_pj\": 128.0}\n"
    "}\n"
    ,
};

int sched_builtin_count(void) { return (int)(sizeof names / sizeof names[0]); }
const char *sched_builtin_name(int i) { return i >= 0 && i < sched_builtin_count() ? names[i] : NULL; }
const char *sched_builtin_json(int i) { return i >= 0 && i < sched_builtin_count() ? texts[i] : NULL; }

/* Unit tests of runtime/topo.c on injected topologies (tests/fixtures, see gen_fixtures.py there).
 * Fixture directory: argv[1], else env SHOAL_FIXTURES_DIR, else "tests/fixtures". */
#include "topo.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWO_SOCKET "2socket-8gpu.xml"
#define ONE_SOCKET "1socket-4gpu.xml"
#define NO_GPU "pack:1 core:4 pu:2"
#define NO_GPU_2NUMA "pack:2 numa:1 core:2 pu:2"
#define POISON 0xa5

static const char *fixtures = "tests/fixtures";

/* name ending in .xml = a fixture file, else a synthetic string. */
static hwloc_topology_t load(const char *name)
{
    char path[4096];
    hwloc_topology_t t = NULL;
    size_t n = strlen(name);

    if (n > 4 && strcmp(name + n - 4, ".xml") == 0) {
        snprintf(path, sizeof(path), "%s/%s", fixtures, name);
        name = path;
    }
    ck_assert_msg(shoal_topo_load(&t, name) == SHOAL_OK, "cannot load %s", name);
    return t;
}

static shoal_topo_map_t map(hwloc_topology_t t, int rank, int size, shoal_bind_t bind)
{
    shoal_topo_map_t m;

    memset(&m, POISON, sizeof(m));
    ck_assert_int_eq(shoal_topo_map_pe(t, rank, size, bind, &m), SHOAL_OK);
    ck_assert_ptr_nonnull(m.cpuset);
    return m;
}

/* "0,16" style list of a bitmap, in a rotating static buffer (a few may be live in one assertion). */
static const char *list(hwloc_const_bitmap_t b)
{
    static char bufs[4][256];
    static int next;
    char *s = bufs[next++ % 4];

    hwloc_bitmap_list_snprintf(s, sizeof(bufs[0]), b);
    return s;
}

START_TEST(test_gpus_2socket)
{
    static const char *busid[8] = { "0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                                    "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0" };
    hwloc_topology_t t = load(TWO_SOCKET);
    shoal_topo_gpu_t g[9];

    memset(g, POISON, sizeof(g));
    ck_assert_int_eq(shoal_topo_gpus(t, NULL, 0), 8);
    ck_assert_int_eq(shoal_topo_gpus(t, g, 9), 8); /* ASPEED VGA, NVSwitch, NICs, NVMe are not GPUs */
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(g[i].busid, busid[i]);
        ck_assert_uint_eq(g[i].vendor, 0x10de);
        ck_assert_uint_eq(g[i].device, 0x2330);
        ck_assert_uint_eq(g[i].class_id, 0x0302);
        ck_assert_int_eq(g[i].numa, i / 4);
    }
    ck_assert_uint_eq(((unsigned char *)&g[8])[0], POISON);
    /* Fewer slots than GPUs: the count is still 8, only the first 3 are written. */
    memset(g, POISON, sizeof(g));
    ck_assert_int_eq(shoal_topo_gpus(t, g, 3), 8);
    ck_assert_str_eq(g[2].busid, "0000:52:00.0");
    ck_assert_uint_eq(((unsigned char *)&g[3])[0], POISON);
    ck_assert_int_eq(shoal_topo_gpus(t, NULL, 1), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_gpus(t, g, -1), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_gpus(NULL, g, 1), SHOAL_ERR_INVAL);
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_gpus_1socket)
{
    static const char *busid[4] = { "0000:03:00.0", "0000:43:00.0", "0000:83:00.0", "0000:c1:00.0" };
    static const unsigned class_id[4] = { 0x0380, 0x0380, 0x0300, 0x0380 };
    hwloc_topology_t t = load(ONE_SOCKET);
    shoal_topo_gpu_t g[4];

    ck_assert_int_eq(shoal_topo_gpus(t, g, 4), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(g[i].busid, busid[i]);
        ck_assert_uint_eq(g[i].vendor, 0x1002);
        ck_assert_uint_eq(g[i].class_id, class_id[i]);
        ck_assert_int_eq(g[i].numa, 0); /* 43:00.0 hangs off the Machine: still the only node */
    }
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_gpus_none)
{
    hwloc_topology_t t = load(NO_GPU);

    ck_assert_int_eq(shoal_topo_gpus(t, NULL, 0), 0);
    hwloc_topology_destroy(t);
}
END_TEST

/* 8 PEs on 8 GPUs: PE i gets GPU i, the GPU's NUMA node, and cores 0-3 (node 0) or 8-11 (node 1). */
START_TEST(test_map_2socket_8pe)
{
    static const char *busid[8] = { "0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                                    "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0" };
    static const int core[8] = { 0, 1, 2, 3, 8, 9, 10, 11 };
    static const char *pus[8] = { "0,16", "1,17", "2,18", "3,19", "8,24", "9,25", "10,26", "11,27" };
    hwloc_topology_t t = load(TWO_SOCKET);
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();

    for (int i = 0; i < 8; i++) {
        shoal_topo_map_t m = map(t, i, 8, SHOAL_BIND_CORE);

        ck_assert_int_eq(m.gpu, i);
        ck_assert_str_eq(m.gpu_busid, busid[i]);
        ck_assert_int_eq(m.numa, i / 4);
        ck_assert_int_eq(m.core, core[i]);
        ck_assert_int_eq(m.bind, SHOAL_BIND_CORE);
        ck_assert_str_eq(list(m.cpuset), pus[i]);
        ck_assert(!hwloc_bitmap_intersects(seen, m.cpuset)); /* distinct cores */
        hwloc_bitmap_or(seen, seen, m.cpuset);
        hwloc_bitmap_free(m.cpuset);
    }
    hwloc_bitmap_free(seen);
    hwloc_topology_destroy(t);
}
END_TEST

/* 16 PEs on 8 GPUs: PEs i and i+8 share GPU i and its node, on distinct cores (node 0 holds PEs 0-3 and 8-11). */
START_TEST(test_map_2socket_16pe)
{
    hwloc_topology_t t = load(TWO_SOCKET);
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();

    for (int i = 0; i < 16; i++) {
        shoal_topo_map_t m = map(t, i, 16, SHOAL_BIND_CORE);
        int g = i % 8, numa = g / 4, slot = (g % 4) + (i >= 8 ? 4 : 0);

        ck_assert_int_eq(m.gpu, g);
        ck_assert_int_eq(m.numa, numa);
        ck_assert_int_eq(m.core, 8 * numa + slot);
        ck_assert_int_eq(hwloc_bitmap_weight(m.cpuset), 2);
        ck_assert(!hwloc_bitmap_intersects(seen, m.cpuset));
        hwloc_bitmap_or(seen, seen, m.cpuset);
        hwloc_bitmap_free(m.cpuset);
    }
    ck_assert_str_eq(list(seen), "0-31"); /* all 16 cores used once */
    hwloc_bitmap_free(seen);
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_map_2socket_numa)
{
    hwloc_topology_t t = load(TWO_SOCKET);
    shoal_topo_map_t m = map(t, 5, 8, SHOAL_BIND_NUMA);

    ck_assert_int_eq(m.gpu, 5);
    ck_assert_int_eq(m.numa, 1);
    ck_assert_int_eq(m.core, -1);
    ck_assert_str_eq(list(m.cpuset), "8-15,24-31");
    hwloc_bitmap_free(m.cpuset);
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_map_1socket_6pe)
{
    static const int gpu[6] = { 0, 1, 2, 3, 0, 1 };
    static const char *busid[4] = { "0000:03:00.0", "0000:43:00.0", "0000:83:00.0", "0000:c1:00.0" };
    hwloc_topology_t t = load(ONE_SOCKET);

    for (int i = 0; i < 6; i++) {
        shoal_topo_map_t m = map(t, i, 6, SHOAL_BIND_CORE);

        ck_assert_int_eq(m.gpu, gpu[i]);
        ck_assert_str_eq(m.gpu_busid, busid[gpu[i]]);
        ck_assert_int_eq(m.numa, 0);
        ck_assert_int_eq(m.core, i);
        ck_assert_int_eq(hwloc_bitmap_first(m.cpuset), i);
        ck_assert_int_eq(hwloc_bitmap_weight(m.cpuset), 1);
        hwloc_bitmap_free(m.cpuset);
    }
    hwloc_topology_destroy(t);
}
END_TEST

/* More PEs than cores: 10 PEs on 8 cores wrap around, PEs 8 and 9 share cores 0 and 1. */
START_TEST(test_map_1socket_wrap)
{
    hwloc_topology_t t = load(ONE_SOCKET);

    for (int i = 0; i < 10; i++) {
        shoal_topo_map_t m = map(t, i, 10, SHOAL_BIND_CORE);

        ck_assert_int_eq(m.gpu, i % 4);
        ck_assert_int_eq(m.core, i % 8);
        hwloc_bitmap_free(m.cpuset);
    }
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_map_nogpu)
{
    static const char *pus[3] = { "0-1", "2-3", "4-5" };
    hwloc_topology_t t = load(NO_GPU);

    for (int i = 0; i < 3; i++) {
        shoal_topo_map_t m = map(t, i, 3, SHOAL_BIND_CORE);

        ck_assert_int_eq(m.gpu, -1);
        ck_assert_str_eq(m.gpu_busid, "");
        ck_assert_int_eq(m.numa, 0);
        ck_assert_int_eq(m.core, i);
        ck_assert_str_eq(list(m.cpuset), pus[i]);
        hwloc_bitmap_free(m.cpuset);
    }
    hwloc_topology_destroy(t);
}
END_TEST

/* No GPU, 2 NUMA nodes: PEs alternate nodes 0,1,0,1 and take each node's cores in order. */
START_TEST(test_map_nogpu_2numa)
{
    static const int core[5] = { 0, 2, 1, 3, 0 };
    hwloc_topology_t t = load(NO_GPU_2NUMA);

    for (int i = 0; i < 5; i++) {
        shoal_topo_map_t m = map(t, i, 5, SHOAL_BIND_CORE), n = map(t, i, 5, SHOAL_BIND_NUMA);

        ck_assert_int_eq(m.gpu, -1);
        ck_assert_int_eq(m.numa, i % 2);
        ck_assert_int_eq(m.core, core[i]);
        ck_assert_str_eq(list(n.cpuset), i % 2 ? "4-7" : "0-3");
        hwloc_bitmap_free(m.cpuset);
        hwloc_bitmap_free(n.cpuset);
    }
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_map_bind_none)
{
    static const struct { const char *src; const char *all; } c[] = {
        { TWO_SOCKET, "0-31" }, { ONE_SOCKET, "0-7" }, { NO_GPU, "0-7" },
    };

    for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
        hwloc_topology_t t = load(c[k].src);
        shoal_topo_map_t m = map(t, 1, 2, SHOAL_BIND_NONE);

        ck_assert_str_eq(list(m.cpuset), c[k].all);
        ck_assert(hwloc_bitmap_isequal(m.cpuset, hwloc_topology_get_topology_cpuset(t)));
        ck_assert_int_eq(m.core, -1);
        ck_assert_int_eq(m.bind, SHOAL_BIND_NONE);
        ck_assert_int_eq(shoal_topo_bind_self(t, &m), SHOAL_OK); /* no-op */
        hwloc_bitmap_free(m.cpuset);
        hwloc_topology_destroy(t);
    }
}
END_TEST

START_TEST(test_map_deterministic)
{
    static const char *srcs[3] = { TWO_SOCKET, ONE_SOCKET, NO_GPU_2NUMA };

    for (int k = 0; k < 3; k++) {
        hwloc_topology_t t1 = load(srcs[k]), t2 = load(srcs[k]);

        for (int b = SHOAL_BIND_NONE; b <= SHOAL_BIND_NUMA; b++) {
            for (int i = 0; i < 12; i++) {
                shoal_topo_map_t x = map(t1, i, 12, b), y = map(t1, i, 12, b), z = map(t2, i, 12, b);

                ck_assert_int_eq(x.gpu, y.gpu);
                ck_assert_int_eq(x.gpu, z.gpu);
                ck_assert_str_eq(x.gpu_busid, y.gpu_busid);
                ck_assert_str_eq(x.gpu_busid, z.gpu_busid);
                ck_assert_int_eq(x.numa, y.numa);
                ck_assert_int_eq(x.numa, z.numa);
                ck_assert_int_eq(x.core, y.core);
                ck_assert_int_eq(x.core, z.core);
                ck_assert(hwloc_bitmap_isequal(x.cpuset, y.cpuset));
                ck_assert(hwloc_bitmap_isequal(x.cpuset, z.cpuset));
                hwloc_bitmap_free(x.cpuset);
                hwloc_bitmap_free(y.cpuset);
                hwloc_bitmap_free(z.cpuset);
            }
        }
        hwloc_topology_destroy(t1);
        hwloc_topology_destroy(t2);
    }
}
END_TEST

START_TEST(test_map_inval)
{
    hwloc_topology_t t = load(TWO_SOCKET);
    shoal_topo_map_t m;

    memset(&m, POISON, sizeof(m));
    ck_assert_int_eq(shoal_topo_map_pe(t, 8, 8, SHOAL_BIND_CORE, &m), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_map_pe(t, -1, 8, SHOAL_BIND_CORE, &m), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_map_pe(t, 0, 0, SHOAL_BIND_CORE, &m), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_map_pe(t, 0, 1, (shoal_bind_t)7, &m), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_map_pe(NULL, 0, 1, SHOAL_BIND_CORE, &m), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_map_pe(t, 0, 1, SHOAL_BIND_CORE, NULL), SHOAL_ERR_INVAL);
    ck_assert_uint_eq(((unsigned char *)&m)[0], POISON); /* outputs set only on success */
    ck_assert_int_eq(shoal_topo_bind_self(NULL, &m), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_bind_self(t, NULL), SHOAL_ERR_INVAL);
    m = map(t, 0, 1, SHOAL_BIND_CORE);
    ck_assert_int_eq(shoal_topo_bind_self(t, &m), SHOAL_ERR_INVAL); /* not this machine: refused */
    hwloc_bitmap_free(m.cpuset);
    hwloc_topology_destroy(t);
}
END_TEST

START_TEST(test_parse_bind)
{
    shoal_bind_t b = (shoal_bind_t)42;

    ck_assert_int_eq(shoal_topo_parse_bind("bogus", &b), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_parse_bind("", &b), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_parse_bind("CORE", &b), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_parse_bind("core ", &b), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_parse_bind(NULL, &b), SHOAL_ERR_INVAL);
    ck_assert_int_eq(shoal_topo_parse_bind("core", NULL), SHOAL_ERR_INVAL);
    ck_assert_int_eq(b, 42);
    ck_assert_int_eq(shoal_topo_parse_bind("core", &b), SHOAL_OK);
    ck_assert_int_eq(b, SHOAL_BIND_CORE);
    ck_assert_int_eq(shoal_topo_parse_bind("numa", &b), SHOAL_OK);
    ck_assert_int_eq(b, SHOAL_BIND_NUMA);
    ck_assert_int_eq(shoal_topo_parse_bind("none", &b), SHOAL_OK);
    ck_assert_int_eq(b, SHOAL_BIND_NONE);
}
END_TEST

START_TEST(test_format)
{
    hwloc_topology_t t = load(TWO_SOCKET), s = load(NO_GPU);
    shoal_topo_map_t a = map(t, 0, 8, SHOAL_BIND_CORE), b = map(t, 4, 8, SHOAL_BIND_NUMA);
    shoal_topo_map_t c = map(s, 0, 1, SHOAL_BIND_NONE);
    char buf[128];

    ck_assert_int_eq(shoal_topo_format_map(t, 0, &a, buf, sizeof(buf)), SHOAL_OK);
    ck_assert_str_eq(buf, "PE 0: cores 0 (NUMA 0), GPU 0000:1b:00.0");
    ck_assert_int_eq(shoal_topo_format_map(t, 12, &b, buf, sizeof(buf)), SHOAL_OK);
    ck_assert_str_eq(buf, "PE 12: cores 8-15 (NUMA 1), GPU 0000:9d:00.0");
    ck_assert_int_eq(shoal_topo_format_map(s, 3, &c, buf, sizeof(buf)), SHOAL_OK);
    ck_assert_str_eq(buf, "PE 3: cores 0-3 (NUMA 0), GPU none");
    ck_assert_int_eq(shoal_topo_format_map(s, 3, &c, buf, 10), SHOAL_ERR_INVAL); /* truncated */
    ck_assert_str_eq(buf, "PE 3: cor");
    ck_assert_int_eq(shoal_topo_format_map(s, 3, &c, NULL, 10), SHOAL_ERR_INVAL);
    hwloc_bitmap_free(a.cpuset);
    hwloc_bitmap_free(b.cpuset);
    hwloc_bitmap_free(c.cpuset);
    hwloc_topology_destroy(t);
    hwloc_topology_destroy(s);
}
END_TEST

START_TEST(test_load)
{
    char path[4096];
    hwloc_topology_t t = (hwloc_topology_t)&path; /* poison: must stay untouched on errors */

    snprintf(path, sizeof(path), "%s/missing.xml", fixtures);
    ck_assert_int_eq(shoal_topo_load(&t, path), SHOAL_ERR);
    ck_assert_int_eq(shoal_topo_load(&t, "bogus:3"), SHOAL_ERR);
    ck_assert_ptr_eq(t, (hwloc_topology_t)&path);
    ck_assert_int_eq(shoal_topo_load(NULL, NO_GPU), SHOAL_ERR_INVAL);
}
END_TEST

/* This machine: loads, and binding PE 0 to its core is what the OS then reports (forked test: no leak). */
START_TEST(test_bind_self)
{
    hwloc_topology_t t;
    hwloc_bitmap_t now = hwloc_bitmap_alloc();
    shoal_topo_map_t m;

    ck_assert_int_eq(shoal_topo_load(&t, NULL), SHOAL_OK);
    ck_assert_int_ge(shoal_topo_gpus(t, NULL, 0), 0);
    m = map(t, 0, 1, SHOAL_BIND_CORE);
    ck_assert_int_eq(shoal_topo_bind_self(t, &m), SHOAL_OK);
    ck_assert_int_eq(hwloc_get_cpubind(t, now, HWLOC_CPUBIND_PROCESS), 0);
    ck_assert_str_eq(list(now), list(m.cpuset));
    hwloc_bitmap_free(now);
    hwloc_bitmap_free(m.cpuset);
    hwloc_topology_destroy(t);
}
END_TEST

/* Helper threads' CPUs: the cores no PE of the node is bound to, the PE's NUMA node's first. */
START_TEST(test_spare_cpus)
{
    hwloc_topology_t t = load(NO_GPU_2NUMA); /* 2 nodes x 2 cores x 2 PUs: PUs 0-3 node 0, 4-7 node 1 */
    hwloc_bitmap_t s = shoal_topo_spare_cpus(t, 1, SHOAL_BIND_CORE, 0, NULL);
    shoal_topo_map_t m = map(t, 0, 1, SHOAL_BIND_CORE);

    ck_assert_ptr_nonnull(s);
    ck_assert(!hwloc_bitmap_intersects(s, m.cpuset));       /* never the PE's own core */
    ck_assert_str_eq(list(s), "2-3");                         /* node 0's other core */
    hwloc_bitmap_free(s);
    s = shoal_topo_spare_cpus(t, 1, SHOAL_BIND_CORE, 1, NULL);      /* node 1 asked: its cores */
    ck_assert_str_eq(list(s), "4-7");
    hwloc_bitmap_free(s);
    s = shoal_topo_spare_cpus(t, 4, SHOAL_BIND_CORE, 0, NULL);      /* 4 PEs take all 4 cores: none */
    ck_assert(hwloc_bitmap_iszero(s));
    hwloc_bitmap_free(s);
    s = shoal_topo_spare_cpus(t, 2, SHOAL_BIND_NONE, 0, NULL);      /* unbound: nothing to choose */
    ck_assert(hwloc_bitmap_iszero(s));
    hwloc_bitmap_free(s);
    ck_assert_ptr_null(shoal_topo_spare_cpus(t, 0, SHOAL_BIND_CORE, 0, NULL));
    /* excluded CPUs go before the NUMA choice: node 0's spare core excluded leaves node 1's */
    hwloc_bitmap_t ex = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(ex, 2, 3);
    s = shoal_topo_spare_cpus(t, 1, SHOAL_BIND_CORE, 0, ex);
    ck_assert_str_eq(list(s), "4-7");
    hwloc_bitmap_free(s);
    hwloc_bitmap_free(ex);
    hwloc_bitmap_free(m.cpuset);
    hwloc_topology_destroy(t);
}
END_TEST

static Suite *topo_suite(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = tcase_create("topo");

    tcase_add_test(tc, test_gpus_2socket);
    tcase_add_test(tc, test_gpus_1socket);
    tcase_add_test(tc, test_gpus_none);
    tcase_add_test(tc, test_map_2socket_8pe);
    tcase_add_test(tc, test_map_2socket_16pe);
    tcase_add_test(tc, test_map_2socket_numa);
    tcase_add_test(tc, test_map_1socket_6pe);
    tcase_add_test(tc, test_map_1socket_wrap);
    tcase_add_test(tc, test_map_nogpu);
    tcase_add_test(tc, test_map_nogpu_2numa);
    tcase_add_test(tc, test_map_bind_none);
    tcase_add_test(tc, test_map_deterministic);
    tcase_add_test(tc, test_map_inval);
    tcase_add_test(tc, test_parse_bind);
    tcase_add_test(tc, test_format);
    tcase_add_test(tc, test_load);
    tcase_add_test(tc, test_bind_self);
    tcase_add_test(tc, test_spare_cpus);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    char probe[4096];
    SRunner *sr;
    FILE *f;
    int failed;

    if (argc > 1)
        fixtures = argv[1];
    else if (getenv("SHOAL_FIXTURES_DIR"))
        fixtures = getenv("SHOAL_FIXTURES_DIR");
    snprintf(probe, sizeof(probe), "%s/%s", fixtures, TWO_SOCKET);
    f = fopen(probe, "r");
    if (!f) {
        fprintf(stderr, "test_topo: no fixtures at %s (pass the directory as argv[1] or SHOAL_FIXTURES_DIR)\n",
                probe);
        return EXIT_FAILURE;
    }
    fclose(f);
    sr = srunner_create(topo_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

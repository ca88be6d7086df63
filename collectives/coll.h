/*
 * coll.h - the host collectives' model (below), their vocabulary (families, algorithm ids) and the algorithms'
 * entry points; the inline fast paths and the steps every collective shares: coll_core.h; teams: team.h.
 *
 * Model. Every collective runs over a shoal_team_t: a team (SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED, a split) or an
 * active set (PE_start, logPE_stride, PE_size, pSync) of the deprecated API. A member r is world PE world[r]; its
 * heap delta delta[r] is cached at creation, so translating a symmetric heap address for any member is one load and
 * one add, done once per member per call (never per element or chunk).
 *
 * Signals. A member signals member r by storing into a flag cell in r's memory that only it writes (cells are
 * indexed by the sender's team rank, one cache line each). Teams store a sequence value: t->seq advances
 * identically on every member (the same collectives in the same order), each signal carries the current value and
 * the receiver waits until its cell is >= that value. Values only grow, so no flag is ever reset and back-to-back
 * collectives need no barrier between them. Active sets signal through the user's pSync instead, as counters
 * (the sender adds 1, the receiver waits for >= 1 and subtracts 1): pSync is back to all zeros on return, as the
 * specification requires, and consecutive calls with the same pSync cannot lose a signal.
 *
 * Entry rule (back-to-back calls). A member never writes into another member's dest for a call before that member
 * has entered the call: the member may still be reading the previous call's result there (no barrier is needed
 * between calls, and programs read dest right after the call returns). A writer that has no other proof of entry
 * waits for the receiver's entry signal (the receiver posts it first thing); proof can also be any signal the
 * receiver sent in this call, or a chain of signals from it (collect's size exchange, which on teams spanning nodes
 * runs through the leaders; rsag's first exchange). That costs a round trip per call;
 * small team broadcasts avoid it by staging: see below. The `push-unsafe` algorithms skip the entry signal:
 * faster, and correct only when something else orders the calls (a barrier between them).
 *
 * Staging (small broadcasts of teams). Each team slot has a staging area per PE, a ring of SHOAL_STAGE_SLOT-byte
 * slots; a staged round takes the next run of slots that holds its bytes (t->stage_pos, the same on every member;
 * a run that would pass the end starts at slot 0). The root (the staging's owner) copies its source into its own
 * run and signals "ready"; each member waits for that, copies from the root's run into its own dest and signals
 * "done" back. So a PE's dest is only ever written by that PE, inside the call; the root returns without waiting
 * for the members, and waits only before it writes a slot again for the "done" of every member of its last round
 * there (kept per slot in t->stage_done). When a node is crowded, small broadcasts from one root can thus run up
 * to a ring (64 rounds for WORLD) ahead of a member that is not scheduled (a context switch per call otherwise);
 * elsewhere rounds of more than SHOAL_STAGE_DEEP_MAX bytes take half the staging, two rounds in flight, which
 * measured faster with a PE per core; smaller ones still take a slot each (8-128 B at 2 PEs: 1.25-1.35x faster).
 * Destroying a team first waits for those "done" values too, so a slow member never finds a later team's data in
 * a reused slot.
 *
 * Scratch. Each team slot owns symmetric scratch in the internal area, split in two halves; scratch round q uses
 * half q & 1. Every scratch round completes only after a signal chain from every member's start of that round, so
 * a member that writes half q & 1 again (round q + 2) knows that everyone finished reading it in round q. After a
 * team's last round nothing follows, so where members read another PE's half (their leader's, in the hierarchical
 * fcollect and alltoall) shmem_team_destroy waits for them (shoal_coll_scratch_drain) before the slot is reused.
 *
 * Members on other nodes (t->all_far). There a signal costs a message and a round trip costs two, so the entry rule's
 * wait and a member's read of the root's staging (a get) are what a small collective's time is made of. Such teams
 * write into the receivers' own buffers instead, which the rules above already protect:
 *   broadcast: the data goes into a run of slots of each member's staging ring (not the root's) with a signal; the
 *     member copies it into its dest. Before the root writes a slot again it needs every member's word that it read the
 *     slot's last round: a signal of at least that round's "done" value when this root staged it (t->stage_root,
 *     t->stage_done, the same on every member), otherwise the member's entry signal of this round. Members post "done"
 *     only every few rounds from one root (and on a root change), and an entry signal when the root would otherwise
 *     wait for a round they have not confirmed: a loop from one root costs members one message per 64 calls (at most
 *     half the ring's rounds), and the root runs up to the ring ahead without waiting. The data goes down a binomial
 *     tree: the root writes ceil(log2 n) members' slots and each member forwards to its children
 *     (shoal_coll_tree_kids); the root waits for every member's word before its first write.
 *     shmem_team_destroy has members post what they owe before roots wait (shoal_coll_stage_drain).
 *   fcollect and alltoall: every member puts its block into its slot of every receiver's scratch half (a scratch
 *     round: the signal chain of the round before says the receiver has finished with that half) and each copies
 *     the slots into its dest. No entry signal: a PE's dest is only written by that PE.
 *
 * Pushes into scratch (small fcollect and alltoall on t->all_far teams, blocks up to 2 KiB on any team when a node
 * is crowded, up to 256 B otherwise):
 * every member puts its block into its slot of every receiver's scratch half, as above. One signal per member and
 * call instead of two (entered, then data): a round trip between nodes, and on a crowded node a PE that is not
 * scheduled holds its writers back for one exchange per call instead of two.
 *
 * Team slots. Teams take their flags and scratch from SHOAL_TEAM_SLOTS slots reserved at init (slot 0: WORLD,
 * 1: SHARED). A new team takes the lowest slot that no member of its parent team uses (found with one max-reduction
 * over the parent of every member's slot table), so teams with disjoint members may share a slot.
 */
#ifndef SHOAL_COLL_H
#define SHOAL_COLL_H

#include "shoal.h"
#include "team.h" /* the team struct and handles */

/* ---- algorithm selection: SHOAL_COLL_<FAMILY>_ALGO, checked at init, looked up at first use (shoal_coll_algo,
 * coll_core.h) ---- */
enum shoal_coll_family { SHOAL_COLL_BARRIER, SHOAL_COLL_BCAST, SHOAL_COLL_FCOLLECT, SHOAL_COLL_ALLTOALL,
                         SHOAL_COLL_REDUCE, SHOAL_COLL_COLLECT, SHOAL_COLL_NFAMILY };
enum { SHOAL_ALGO_AUTO = 0 };
/* HIER: members signal their node's leader, the leaders run the dissemination barrier among themselves (the only
 * messages between nodes), then release their members; the automatic choice for teams with t->hier, and the
 * dissemination barrier on any other team. */
enum { SHOAL_BARRIER_DISSEM = 1, SHOAL_BARRIER_LINEAR, SHOAL_BARRIER_HIER };
/* *_UNSAFE: the same algorithm without the entry rule (above); never chosen automatically. */
/* BCAST_STAGED: teams only, and only what fits half the staging; otherwise (forced) push. */
/* BCAST_HIER: t->hier teams (else the automatic choice). */
enum { SHOAL_BCAST_PUSH = 1, SHOAL_BCAST_PULL, SHOAL_BCAST_TREE, SHOAL_BCAST_PUSH_UNSAFE, SHOAL_BCAST_STAGED,
       SHOAL_BCAST_HIER };
/* GATHER_HIER, A2A_HIER: fcollect and contiguous alltoall through each node's leader, at any size, on t->hier teams
 * (else the automatic choice, which takes them there up to SHOAL_COLL_HIER_*_PIECES pieces). */
enum { SHOAL_GATHER_PUSH = 1, SHOAL_GATHER_RING, SHOAL_GATHER_RDBL, SHOAL_GATHER_PUSH_UNSAFE, SHOAL_GATHER_HIER };
enum { SHOAL_A2A_PUSH = 1, SHOAL_A2A_PAIRWISE, SHOAL_A2A_PUSH_UNSAFE, SHOAL_A2A_HIER };
/* HALVING: power-of-two teams (else rsag) */
enum { SHOAL_REDUCE_ONESHOT = 1, SHOAL_REDUCE_RDBL, SHOAL_REDUCE_RSAG, SHOAL_REDUCE_HIER, SHOAL_REDUCE_HALVING };

/* ---- algorithms (one file each; the barrier: coll_core.h); sizes in bytes ---- */
/* root_copies: the root's dest gets the data too (team form; the active-set form leaves it alone). */
void shoal_coll_bcast(shoal_team_t *t, void *dest, const void *src, size_t nbytes, int root, bool root_copies,
                      const char *routine);
/* fcollect (all blocks nbytes) and collect (block sizes differ: own block nbytes). */
void shoal_coll_fcollect(shoal_team_t *t, void *dest, const void *src, size_t nbytes, const char *routine);
void shoal_coll_collect(shoal_team_t *t, void *dest, const void *src, size_t nbytes, const char *routine);
/* nelems elements of esize bytes per pair; dst/sst element strides (1, 1: contiguous alltoall). */
void shoal_coll_alltoall(shoal_team_t *t, void *dest, const void *src, size_t nelems, size_t esize,
                         ptrdiff_t dst, ptrdiff_t sst, const char *routine);

/* Reduction operator: out[i] = a[i] op b[i] for n elements (out may be a or b). */
typedef void (*shoal_coll_op_fn)(void *out, const void *a, const void *b, size_t n);
void shoal_coll_reduce(shoal_team_t *t, void *dest, const void *src, size_t nelems, size_t esize,
                       shoal_coll_op_fn op, const char *routine);

#endif

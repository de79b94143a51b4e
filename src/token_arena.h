/* SPDX-License-Identifier: MIT */
/* Where application tokens live (hipObjGetRdmaToken): memory whose
 * addresses are never handed out twice in the life of the process, so the
 * token pointer an application holds is an opaque handle that is never
 * reused. A stale or doubled hipObjCompleteRdmaTransfer() or
 * hipObjPutRdmaToken() then names no live transfer, whatever happened in
 * between; the library finds transfers by comparing pointer values and
 * never reads through a pointer the application passes in.
 *
 * Slots of HO_TOKEN_SLOT bytes are cut in order from 4 KiB pages of a
 * reserved, never released range of address space (4 GiB at a time, mapped
 * PROT_NONE and MAP_NORESERVE: it costs address space, not memory). A page
 * is made writable when its first slot is handed out; once every slot of it
 * has been freed its memory goes back to the kernel and it becomes
 * PROT_NONE again, so an application that reads a token after putting it
 * faults instead of reading another transfer's token. When a range is used
 * up the next one is reserved; the old one stays reserved. At 132 bytes of
 * address space a token, the 128 TiB of a 47-bit user address space last
 * about 10^12 tokens; after that (or under an address-space limit)
 * ho_token_slot_alloc() fails. Thread-safe. */
#ifndef HO_TOKEN_ARENA_H
#define HO_TOKEN_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#define HO_TOKEN_SLOT 128 /* bytes: an 88-digit token and its NUL fit */

/* A fresh, zeroed slot whose address was never returned before; NULL if no
 * address space can be reserved. */
char *ho_token_slot_alloc(void);

/* Give a slot back. Its address is not reused. */
void ho_token_slot_free(char *slot);

#endif

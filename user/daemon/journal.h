/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Log lines to journald with fields (adapter over sd_journal_sendv): every
 * line keeps MESSAGE and PRIORITY, and an event line ("event=reload
 * result=ok file=...") also gets one field per pair, the key upper-cased:
 * `journalctl -u sluiced EVENT=reload RESULT=failed` finds the failed
 * reloads.  Only when stderr is the journal stream and journald's socket
 * is there.
 */
#ifndef SLUICE_JOURNAL_H
#define SLUICE_JOURNAL_H

/* Installs the sink when lines go to journald; nothing otherwise. */
void sl_journal_fields_init(void);

#endif

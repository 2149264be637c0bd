/* The floor: the least a stdio JSON-RPC server can do per request.
 *
 * Usage: floor REPLY_FILE
 * REPLY_FILE holds one canned response line whose id is written as the
 * placeholder `"id":0,` (the first occurrence).  For every input line that
 * carries an id, the floor writes that line back with the request's raw id
 * text in place of 0, in one write(2).  Lines without `"id":` (notifications,
 * blank lines) get no reply.  It parses nothing else: what it costs is the
 * pipes, one scan of each line, and the client.
 *
 * Reads fd 0 in 64 KiB chunks and splits on LF, as the body does.  Exits 0
 * at end of input or when stdout is gone (EPIPE), 2 on bad usage.
 *
 * Built with -DFLOOR_SQLITE (and -lsqlite3), the store floor:
 *   floor REPLY_FILE STORE RECORD_BYTES
 * also commits one SQLite transaction per reply, before writing it, as the
 * body's --state does a turn: BEGIN IMMEDIATE, rewrite one record of
 * RECORD_BYTES by its rowid, COMMIT, on a store made as the body makes its
 * own (1 KiB pages, WAL, synchronous NORMAL).  It reads nothing back: what
 * it costs is SQLite's least for one committed turn.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef FLOOR_SQLITE
#include <sqlite3.h>
#endif

#define CHUNK (64 * 1024)
#define MAX_LINE (4 * 1024 * 1024)
#define MAX_ID 256

static const char placeholder[] = "\"id\":0,";

static char *reply_head, *reply_tail, *out;
static size_t head_len, tail_len;

static void load_reply(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        exit(2);
    }
    char *text = malloc((size_t)st.st_size + 2);
    ssize_t got = read(fd, text, (size_t)st.st_size);
    close(fd);
    if (got != st.st_size) {
        fprintf(stderr, "floor: short read of %s\n", path);
        exit(2);
    }
    if (got > 0 && text[got - 1] == '\n')
        got--;
    text[got] = '\n';
    text[got + 1] = '\0';
    char *at = strstr(text, placeholder);
    if (at == NULL) {
        fprintf(stderr, "floor: %s has no %s placeholder\n", path, placeholder);
        exit(2);
    }
    head_len = (size_t)(at - text) + 5; /* up to and including "id": */
    reply_head = text;
    reply_tail = at + 6;                /* from the comma on, LF included */
    tail_len = strlen(reply_tail);
    out = malloc(head_len + MAX_ID + tail_len);
    memcpy(out, reply_head, head_len);
}

#ifdef FLOOR_SQLITE
static sqlite3 *db;
static sqlite3_stmt *begin_write, *rewrite, *commit;
static char *record;
static int record_bytes;

static void fail(const char *what)
{
    fprintf(stderr, "floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    exit(2);
}

static void open_store(const char *path, const char *bytes)
{
    record_bytes = atoi(bytes);
    if (record_bytes <= 0) {
        fprintf(stderr, "floor: RECORD_BYTES must be a positive number\n");
        exit(2);
    }
    record = calloc(1, (size_t)record_bytes);
    /* The body's configuration of SQLite (Session_Store.Configure_Once) */
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        fail(path);
    if (sqlite3_exec(db, "PRAGMA page_size = 1024; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                     " CREATE TABLE IF NOT EXISTS sessions (used INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE,"
                     " record BLOB NOT NULL); INSERT OR IGNORE INTO sessions VALUES (1, x'00', x'00')",
                     NULL, NULL, NULL) != SQLITE_OK)
        fail(path);
    if (sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin_write, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "UPDATE sessions SET record = ?1 WHERE used = 1", -1, &rewrite, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL) != SQLITE_OK)
        fail(path);
}

/* One committed turn: a reply is written only after it */
static void commit_turn(void)
{
    record[0]++; /* a new record each turn, as a turn's is */
    if (sqlite3_step(begin_write) != SQLITE_DONE)
        fail("BEGIN IMMEDIATE");
    sqlite3_reset(begin_write);
    sqlite3_bind_blob(rewrite, 1, record, record_bytes, SQLITE_STATIC);
    if (sqlite3_step(rewrite) != SQLITE_DONE)
        fail("UPDATE");
    sqlite3_reset(rewrite);
    if (sqlite3_step(commit) != SQLITE_DONE)
        fail("COMMIT");
    sqlite3_reset(commit);
}
#endif

static void write_all(const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(1, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            exit(0); /* the client is gone: nothing left to serve */
        data += n;
        len -= (size_t)n;
    }
}

/* The raw id text after `"id":`, up to the next `,` or `}` outside a string. */
static void answer(const char *line, size_t len)
{
    const char *key = memmem(line, len, "\"id\":", 5);
    if (key == NULL)
        return;
    const char *start = key + 5, *end = start, *limit = line + len;
    int in_string = 0;
    while (end < limit && (in_string || (*end != ',' && *end != '}'))) {
        if (*end == '\\' && in_string)
            end++;
        else if (*end == '"')
            in_string = !in_string;
        end++;
    }
    size_t id_len = (size_t)(end - start);
    if (id_len == 0 || id_len > MAX_ID)
        return;
#ifdef FLOOR_SQLITE
    commit_turn();
#endif
    memcpy(out + head_len, start, id_len);
    memcpy(out + head_len + id_len, reply_tail, tail_len);
    write_all(out, head_len + id_len + tail_len);
}

int main(int argc, char **argv)
{
#ifdef FLOOR_SQLITE
    if (argc != 4) {
        fprintf(stderr, "usage: floor REPLY_FILE STORE RECORD_BYTES\n");
        return 2;
    }
    open_store(argv[2], argv[3]);
#else
    if (argc != 2) {
        fprintf(stderr, "usage: floor REPLY_FILE\n");
        return 2;
    }
#endif
    signal(SIGPIPE, SIG_IGN);
    load_reply(argv[1]);
    static char chunk[CHUNK];
    char *pending = malloc(MAX_LINE);
    size_t pending_len = 0;
    for (;;) {
        ssize_t got = read(0, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t start = 0;
        for (size_t i = 0; i < (size_t)got; i++) {
            if (chunk[i] != '\n')
                continue;
            if (pending_len == 0) {
                answer(chunk + start, i - start);
            } else if (pending_len + (i - start) <= MAX_LINE) {
                memcpy(pending + pending_len, chunk + start, i - start);
                answer(pending, pending_len + (i - start));
            }
            pending_len = 0;
            start = i + 1;
        }
        size_t rest = (size_t)got - start;
        if (rest > 0 && pending_len + rest <= MAX_LINE) {
            memcpy(pending + pending_len, chunk + start, rest);
            pending_len += rest;
        }
    }
    return 0;
}

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
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    memcpy(out + head_len, start, id_len);
    memcpy(out + head_len + id_len, reply_tail, tail_len);
    write_all(out, head_len + id_len + tail_len);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: floor REPLY_FILE\n");
        return 2;
    }
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

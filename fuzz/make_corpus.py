#!/usr/bin/env python3
"""Writes the seed corpora of Hotline's fuzz targets (fuzz/corpus/<target>/seed-*) and their
libFuzzer dictionaries (fuzz/dict/<target>.dict).

Every seed is a small, valid example of what the target's parser reads on a real connection or
from a real file, so that fuzzing reaches deep code within seconds; a few are deliberately broken
in the ways real peers break them. Deterministic: running it again rewrites the same bytes.
Files that are not named seed-* (crash reproducers, regressions) are left alone.

    python3 fuzz/make_corpus.py
"""
import json
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = b"\n%%\n"  # fuzz_input.h: kMessageSeparator


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def write_dict(target, words):
    d = os.path.join(HERE, "dict")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, target + ".dict"), "w") as f:
        f.write("# libFuzzer dictionary of the %s target (written by fuzz/make_corpus.py)\n" % target)
        for i, w in enumerate(words):
            esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "\\x%02x" % ord(c)
                          for c in w)
            f.write('w%d="%s"\n' % (i, esc))


# --- GGUF -------------------------------------------------------------------------------------
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
          BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8


def gstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gval(t, v):
    if t == STR:
        return gstr(v)
    if t == ARR:
        et, items = v
        out = struct.pack("<IQ", et, len(items))
        for it in items:
            out += gval(et, it)
        return out
    return struct.pack(SCALAR[t], v)


def tensor_bytes(ggml, dims):
    n = 1
    for d in dims:
        n *= d
    if ggml == GGML_F32:
        return struct.pack("<%df" % n, *[math.sin(i * 0.37) * 0.1 for i in range(n)])
    if ggml == GGML_F16:
        return struct.pack("<%de" % n, *[math.cos(i * 0.21) * 0.1 for i in range(n)])
    if ggml == GGML_Q8_0:  # blocks of 32: f16 scale + 32 int8
        out = b""
        for b in range(n // 32):
            out += struct.pack("<e", 0.01) + bytes((i * 7 + b) % 256 for i in range(32))
        return out
    raise ValueError(ggml)


def gguf(kvs, tensors, alignment=32, version=3):
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for key, t, v in kvs:
        out += gstr(key) + struct.pack("<I", t) + gval(t, v)
    offset = 0
    blobs = []
    for name, ggml, dims in tensors:
        data = tensor_bytes(ggml, dims)
        out += gstr(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ggml, offset)
        blobs.append(data)
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * (-len(out) % alignment)
    for data in blobs:
        out += data + b"\0" * (-len(data) % alignment)
    return out


def llama_model(tokenizer_model="llama", arch="llama"):
    n_vocab, n_embd, n_head, n_ff = 12, 8, 2, 16
    if tokenizer_model == "llama":
        tokens = ["<unk>", "<s>", "</s>", "\u2581", "\u2581Hello", "\u2581world", "o", "l",
                  "<0x41>", "<|im_start|>", "<|im_end|>", "e"]
        extra = [("tokenizer.ggml.scores", ARR, (F32, [-float(i) for i in range(n_vocab)])),
                 ("tokenizer.ggml.token_type", ARR, (I32, [2, 3, 3, 1, 1, 1, 1, 1, 6, 3, 3, 1])),
                 ("tokenizer.ggml.add_space_prefix", BOOL, True)]
    else:
        tokens = ["H", "e", "l", "o", "\u0120", "w", "He", "ll", "llo", "Hello",
                  "<|im_start|>", "<|im_end|>"]
        extra = [("tokenizer.ggml.pre", STR, "qwen2" if arch == "qwen2" else "default"),
                 ("tokenizer.ggml.merges", ARR, (STR, ["H e", "l l", "ll o", "He llo"])),
                 ("tokenizer.ggml.token_type", ARR, (I32, [1] * 10 + [3, 3]))]
    kvs = [("general.architecture", STR, arch),
           ("general.name", STR, "fuzz seed"),
           (arch + ".context_length", U32, 64),
           (arch + ".embedding_length", U32, n_embd),
           (arch + ".block_count", U32, 1),
           (arch + ".feed_forward_length", U32, n_ff),
           (arch + ".attention.head_count", U32, n_head),
           (arch + ".attention.head_count_kv", U32, 1),
           (arch + ".rope.freq_base", F32, 10000.0),
           (arch + ".attention.layer_norm_rms_epsilon", F32, 1e-5),
           ("tokenizer.ggml.model", STR, tokenizer_model),
           ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
           ("tokenizer.ggml.bos_token_id", U32, 1),
           ("tokenizer.ggml.eos_token_id", U32, 2),
           ("tokenizer.chat_template", STR, "{% for m in messages %}<|im_start|>{{ m.role }}\n"
            "{{ m.content }}<|im_end|>\n{% endfor %}")] + extra
    kv_dim = n_embd // n_head
    tensors = [("token_embd.weight", GGML_F32, [n_embd, n_vocab]),
               ("output_norm.weight", GGML_F32, [n_embd]),
               ("blk.0.attn_norm.weight", GGML_F32, [n_embd]),
               ("blk.0.attn_q.weight", GGML_F32, [n_embd, n_embd]),
               ("blk.0.attn_k.weight", GGML_F32, [n_embd, kv_dim]),
               ("blk.0.attn_v.weight", GGML_F32, [n_embd, kv_dim]),
               ("blk.0.attn_output.weight", GGML_F32, [n_embd, n_embd]),
               ("blk.0.ffn_norm.weight", GGML_F32, [n_embd]),
               ("blk.0.ffn_gate.weight", GGML_F32, [n_embd, n_ff]),
               ("blk.0.ffn_up.weight", GGML_F32, [n_embd, n_ff]),
               ("blk.0.ffn_down.weight", GGML_F32, [n_ff, n_embd])]
    if arch == "qwen2":
        tensors += [("blk.0.attn_q.bias", GGML_F32, [n_embd]),
                    ("blk.0.attn_k.bias", GGML_F32, [kv_dim]),
                    ("blk.0.attn_v.bias", GGML_F32, [kv_dim])]
    return gguf(kvs, tensors)


def gguf_seeds():
    write("gguf", "empty-v3.gguf", gguf([], []))
    write("gguf", "every-type.gguf", gguf(
        [("general.architecture", STR, "llama"), ("t.u8", U8, 200), ("t.i8", I8, -5),
         ("t.u16", U16, 60000), ("t.i16", I16, -30000), ("t.u32", U32, 4000000000),
         ("t.i32", I32, -2000000000), ("t.f32", F32, 1.5), ("t.bool", BOOL, True),
         ("t.u64", U64, 1 << 40), ("t.i64", I64, -(1 << 40)), ("t.f64", F64, 2.25),
         ("t.strs", ARR, (STR, ["a", "", "hello"])), ("t.f32s", ARR, (F32, [0.5, -1.0])),
         ("t.i32s", ARR, (I32, [1, -2, 3])), ("t.bools", ARR, (BOOL, [True, False])),
         ("general.alignment", U32, 64)],
        [("a", GGML_F32, [4, 2]), ("b", GGML_F16, [8]), ("q", GGML_Q8_0, [32, 2])],
        alignment=64))
    write("gguf", "v2-no-tensors.gguf", gguf([("general.name", STR, "v2")], [], version=2))
    write("gguf", "llama-spm.gguf", llama_model("llama"))
    write("gguf", "llama-bpe.gguf", llama_model("gpt2"))
    write("gguf", "qwen2-bpe.gguf", llama_model("gpt2", arch="qwen2"))
    good = llama_model("llama")
    write("gguf", "truncated.gguf", good[: len(good) // 2])


# --- WAV --------------------------------------------------------------------------------------
def chunk(cid, body):
    return cid + struct.pack("<I", len(body)) + body + (b"\0" if len(body) % 2 else b"")


def wav(fmt_tag, channels, rate, bits, data, extra_chunks=b"", fmt_extra=None, fact=False):
    block = channels * bits // 8
    fmt = struct.pack("<HHIIHH", fmt_tag, channels, rate, rate * block, block, bits)
    if fmt_extra is not None:
        fmt += fmt_extra
    body = b"WAVE" + chunk(b"fmt ", fmt)
    if fact:
        body += chunk(b"fact", struct.pack("<I", len(data) // max(block, 1)))
    body += extra_chunks + chunk(b"data", data)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def wav_seeds():
    tone = [int(8000 * math.sin(i * 0.3)) for i in range(40)]
    pcm16 = struct.pack("<%dh" % len(tone), *tone)
    write("wav", "pcm16-8k.wav", wav(1, 1, 8000, 16, pcm16))
    write("wav", "pcm16-stereo-16k-list.wav",
          wav(1, 2, 16000, 16, pcm16, extra_chunks=chunk(b"LIST", b"INFOISFT\x05\0\0\0fuzz\0")))
    write("wav", "mulaw-8k-fact.wav", wav(7, 1, 8000, 8, bytes(range(0, 240, 6)), fmt_extra=b"\0\0",
                                          fact=True))
    write("wav", "alaw-8k.wav", wav(6, 1, 8000, 8, bytes(range(10, 250, 6)), fact=True))
    write("wav", "pcm8-stereo.wav", wav(1, 2, 11025, 8, bytes(range(0, 256, 8))))
    write("wav", "pcm24-48k.wav", wav(1, 1, 48000, 24, b"".join(
        struct.pack("<i", t * 256)[:3] for t in tone)))
    write("wav", "pcm32.wav", wav(1, 1, 22050, 32, struct.pack("<%di" % 10, *[t << 16 for t in tone[:10]])))
    write("wav", "float32.wav", wav(3, 1, 16000, 32, struct.pack("<%df" % 20, *[t / 32768 for t in tone[:20]])))
    guid_pcm = struct.pack("<IHH", 1, 0, 0x10) + bytes([0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71])
    ext = struct.pack("<HHI", 22, 16, 3) + guid_pcm
    write("wav", "extensible-stereo.wav", wav(0xFFFE, 2, 8000, 16, pcm16, fmt_extra=ext))
    write("wav", "odd-chunk.wav", wav(1, 1, 8000, 16, pcm16, extra_chunks=chunk(b"junk", b"abc")))
    write("wav", "truncated.wav", wav(1, 1, 8000, 16, pcm16)[:60])


# --- knowledge base ---------------------------------------------------------------------------
def kb_seeds():
    write("kb_csv", "basic.csv",
          "id,title,body\nreset-pin,Reset your PIN,Say reset PIN and follow the prompts.\n"
          "hours,Opening hours,We are open 8 to 8.\n")
    write("kb_csv", "all-columns-crlf.csv",
          'id,title,body,intent,template,questions\r\n'
          'bill.total,"Your bill","Your bill is {amount}, due {due_date}.",check_bill,'
          '"Your bill is {amount}.","what is my bill|how much do I owe"\r\n'
          'refund:1,Refunds,"Refunds take ""five"" days,\nsometimes more.",get_refund,,'
          '"where is my refund"\r\n')
    write("kb_csv", "reordered-blank-lines.csv",
          "body,id,title\n\nOpen the app.,app_help,App help\n\n")
    write("kb_csv", "unicode.csv",
          "id,title,body\ncafe,Caf\u00e9 hours,\u6211\u4eec\u65e9\u4e0a\u516b\u70b9\u5f00\u95e8\u3002\n")
    write("kb_csv", "bad-quote.csv", 'id,title,body\nx,a"b,c\n')
    write("kb_csv", "articles.jsonl",
          json.dumps({"id": "pin", "title": "PIN", "body": "Reset it in the app.",
                      "questions": "forgot pin|reset pin"}) + "\n" +
          json.dumps({"id": "hours", "title": "Hours", "body": "Eight to eight.",
                      "intent": "hours", "template": ""}) + "\n")
    write_dict("kb_csv", ["id", "title", "body", "intent", "template", "questions", '"', '""',
                          "\r\n", ",", "|", "{amount}", '{"id":"', '","title":"', '","body":"'])


# --- configuration ----------------------------------------------------------------------------
def config_seeds():
    write("config", "empty.yaml", "")
    write("config", "basic.yaml",
          "log_level: debug\nserver:\n  host: 127.0.0.1\n  port: 0\ncalls:\n  max_calls: 4\n"
          "twilio:\n  caller_id_parameters: [caller, From]\nllm:\n  backend: engine\n"
          "  engine:\n    threads: 2\n    kv_type: q8_0\n")
    write("config", "deprecated-keys.yaml",
          "twilio:\n  max_calls: 3\n  over_capacity_text: \"Busy, call later.\"\n"
          "audiosocket:\n  over_capacity_text: 'Busy'\n  port: -1\n")
    write("config", "anchors-flow.yaml",
          "answer: &a {kb_direct_min_score: 4.5}\nspeech_in:\n  vad: {}\nadmin:\n"
          "  token: \"s3cret\"\n  token_env: HOTLINE_ADMIN_TOKEN\nstore:\n  backend: memory\n")
    write("config", "wrong-type.yaml", "server:\n  port: eighty\n")
    for preset in ("hotline.yaml", "telecom_zh.yaml"):  # English and Chinese text values
        with open(os.path.join(HERE, "..", "config", preset), "rb") as f:
            write("config", preset, f.read())
    write_dict("config", ["log_level", "server", "port", "host", "calls", "twilio", "audiosocket",
                          "admin", "token", "llm", "engine", "backend", "answer", "store", "asr",
                          "tts", "speech_in", "audio", "call", "max_calls", ": ", "\n  ", "- ",
                          "[", "]", "{", "}", "&a", "*a", "<<", "!!str", "true", "null", "~",
                          "0x10", "1e3", ".inf", "'", '"', "|", ">", "---", "..."])


# --- Twilio Media Streams ---------------------------------------------------------------------
def b64(b):
    import base64
    return base64.b64encode(b).decode()


def twilio_seeds():
    sid = "MZ18ad3ab5a668481ce02b83e7395059f0"
    connected = {"event": "connected", "protocol": "Call", "version": "1.0.0"}
    start = {"event": "start", "sequenceNumber": "1", "streamSid": sid,
             "start": {"streamSid": sid, "accountSid": "AC1", "callSid": "CA1",
                       "tracks": ["inbound"],
                       "customParameters": {"caller": "+15550100", "lang": "en"},
                       "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000,
                                       "channels": 1}}}

    def media(seq, payload, ts):
        return {"event": "media", "sequenceNumber": str(seq), "streamSid": sid,
                "media": {"track": "inbound", "chunk": str(seq - 1), "timestamp": str(ts),
                          "payload": b64(payload)}}
    dtmf = {"event": "dtmf", "streamSid": sid, "sequenceNumber": "5",
            "dtmf": {"track": "inbound_track", "digit": "#"}}
    mark = {"event": "mark", "sequenceNumber": "6", "streamSid": sid, "mark": {"name": "reply-1"}}
    stop = {"event": "stop", "sequenceNumber": "7", "streamSid": sid,
            "stop": {"accountSid": "AC1", "callSid": "CA1"}}
    frame = bytes((0xFF - i) % 256 for i in range(160))
    call = [connected, start, media(2, frame, 20), media(3, frame[:80], 40), media(4, b"", 60),
            dtmf, mark, stop]
    write("twilio", "call.txt", SEP.join(json.dumps(m).encode() for m in call))
    write("twilio", "reordered.txt", SEP.join(json.dumps(m).encode() for m in
                                              [start, media(3, frame, 40), media(2, frame, 20),
                                               {"event": "transcription", "streamSid": sid}]))
    write("twilio", "media-before-start.txt", json.dumps(media(2, frame, 20)))
    write_dict("twilio", ['"event"', '"connected"', '"start"', '"media"', '"dtmf"', '"mark"',
                          '"stop"', '"streamSid"', '"sequenceNumber"', '"payload"', '"track"',
                          '"chunk"', '"timestamp"', '"customParameters"', '"mediaFormat"',
                          '"encoding"', '"sampleRate"', '"channels"', '"tracks"', '"digit"',
                          '"name"', '"accountSid"', '"callSid"', '"audio/x-mulaw"', "8000",
                          "\\u0000", "==", "\n%%\n"])


# --- browser softphone ------------------------------------------------------------------------
def softphone_seeds():
    pcm = struct.pack("<160h", *[int(3000 * math.sin(i / 5)) for i in range(160)])  # 10 ms @16k
    msgs = [b"T" + json.dumps({"type": "start", "version": 1, "sample_rate": 16000,
                               "caller_id": "+1 555 0100"}).encode(),
            b"B" + pcm, b"B" + pcm * 3,
            b"T" + json.dumps({"type": "mark", "name": "m7"}).encode(),
            b"T" + json.dumps({"type": "dtmf", "digit": "5"}).encode(),
            b"T" + json.dumps({"type": "hangup"}).encode()]
    write("softphone", "call.txt", SEP.join(msgs))
    write("softphone", "8k-odd-frame.txt", SEP.join(
        [b"T" + json.dumps({"type": "start", "sample_rate": 8000}).encode(), b"B" + pcm[:161]]))
    write("softphone", "audio-before-start.txt", b"B" + pcm)
    write_dict("softphone", ['"type"', '"start"', '"mark"', '"dtmf"', '"hangup"', '"sample_rate"',
                             '"caller_id"', '"name"', '"digit"', '"version"', "16000", "8000",
                             "\n%%\nB", "\n%%\nT"])


# --- AudioSocket ------------------------------------------------------------------------------
def asock(t, payload=b""):
    return bytes([t]) + struct.pack(">H", len(payload)) + payload


def audiosocket_seeds():
    uuid = bytes(range(0x10, 0x20))
    audio = struct.pack("<160h", *[int(2000 * math.sin(i / 3)) for i in range(160)])
    call = asock(0x01, uuid) + asock(0x10, audio) + asock(0x10, audio) + asock(0x03, b"5") + \
        asock(0x10, audio[:64]) + asock(0x00)
    # First byte: how the stream is cut into reads (fuzz_input.h, StreamChunker).
    write("audiosocket", "call-1byte-reads.bin", b"\x00" + call)
    write("audiosocket", "call-varied-reads.bin", b"\x40" + call)
    write("audiosocket", "error-packet.bin", b"\x07" + asock(0x01, uuid) + asock(0xFF, b"\x02"))
    write("audiosocket", "bad-type.bin", b"\x02" + asock(0x01, uuid) + asock(0x42, b"xx"))
    write("audiosocket", "cut-off.bin", b"\x05" + asock(0x01, uuid) + asock(0x10, audio)[:100])


# --- HTTP requests ----------------------------------------------------------------------------
def http_seeds():
    get = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88\r\n"
           b"Accept: */*\r\n\r\n")
    body = b'{"messages":[{"role":"user","content":"hi"}]}'
    post = (b"POST /v1/chat/completions?trace=1 HTTP/1.1\r\nHost: h\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    chunked = (b"POST /admin/kb/reload HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n"
               b"Trailer: x\r\n\r\n")
    upgrade = (b"GET /twilio HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
               b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               b"Origin: http://h\r\n\r\n")
    close = b"GET /metrics HTTP/1.0\r\n\r\n"
    write("http_request", "get.txt", b"\x00" + get)
    write("http_request", "pipelined.txt", b"\x20" + get + post + chunked + close)
    write("http_request", "upgrade.txt", b"\x03" + upgrade)
    write("http_request", "folded-dup-headers.txt",
          b"\x10GET /a?b=c?d HTTP/1.1\r\nX-A: 1\r\nx-a: 2\r\nHost:h\r\nContent-Length: 0\r\n\r\n")
    write("http_request", "bad-content-length.txt",
          b"\x01POST / HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\nab")
    write_dict("http_request", ["GET ", "POST ", " HTTP/1.1\r\n", " HTTP/1.0\r\n", "\r\n\r\n",
                                "Content-Length: ", "Transfer-Encoding: chunked", "Connection: ",
                                "keep-alive", "close", "Upgrade: websocket", "Upgrade",
                                "Sec-WebSocket-Key: ", "Sec-WebSocket-Version: 13", "Host: ",
                                "Origin: ", "0\r\n\r\n", ";", "?", "%00", "Expect: 100-continue"])


# --- OpenAI API -------------------------------------------------------------------------------
def openai_seeds():
    write("openai_api", "chat.json", json.dumps(
        {"model": "demo", "messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": "Where is my bill?"}],
         "max_tokens": 64, "temperature": 0.7, "top_p": 0.9, "stop": ["\n\n", "User:"],
         "seed": 42}))
    write("openai_api", "chat-stream-parts.json", json.dumps(
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]},
                      {"role": "assistant", "content": None},
                      {"role": "user", "content": "again"}],
         "stream": True, "stream_options": {"include_usage": True},
         "max_completion_tokens": 16, "n": 1, "top_k": 40, "repetition_penalty": 1.1}))
    write("openai_api", "completion.json", json.dumps(
        {"prompt": "<|im_start|>user\nhi<|im_end|>\n", "max_tokens": 8, "stop": "<|im_end|>"}))
    write("openai_api", "completion-array.json", json.dumps({"prompt": ["one"], "echo": False}))
    write("openai_api", "bad-role.json", json.dumps({"messages": [{"role": "wizard",
                                                                   "content": "x"}]}))
    write_dict("openai_api", ['"messages"', '"role"', '"content"', '"system"', '"user"',
                              '"assistant"', '"tool"', '"stream"', '"stream_options"',
                              '"include_usage"', '"max_tokens"', '"max_completion_tokens"',
                              '"temperature"', '"top_p"', '"top_k"', '"repetition_penalty"',
                              '"seed"', '"n"', '"stop"', '"prompt"', '"model"', '"echo"',
                              '"logprobs"', '"suffix"', '"best_of"', '"type"', '"text"', "true",
                              "null", "1e308", "-0", "\\ud83d\\ude00"])


# --- Server-Sent Events -----------------------------------------------------------------------
def sse_seeds():
    def chunk_json(content=None, finish=None, usage=None):
        j = {"id": "c1", "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": {} if content is None else {"content": content},
                          "finish_reason": finish}]}
        if usage:
            j["usage"] = usage
        return json.dumps(j)
    body = (": keep-alive\n\n" +
            "data: " + chunk_json("Your bill") + "\n\n" +
            "data: " + chunk_json(" is $42.") + "\r\n\r\n" +
            "event: message\nid: 7\ndata: " + chunk_json(None, "stop") + "\n\n" +
            "data: " + chunk_json(None, None, {"prompt_tokens": 12, "completion_tokens": 4,
                                               "prompt_tokens_details": {"cached_tokens": 8}}) +
            "\n\ndata: [DONE]\n\n")
    write("sse", "chat-stream-1byte.txt", b"\x00" + body.encode())
    write("sse", "chat-stream-varied.txt", b"\x11" + body.encode())
    write("sse", "multiline-cr.txt", b"\x03data: {\"choices\":\rdata: []}\r\rdata:x\ndata\n\n")
    write("sse", "error-event.txt",
          b"\x08data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n")
    write("sse", "no-final-blank.txt", b"\x02retry: 10\ndata: " + chunk_json("tail").encode())
    write_dict("sse", ["data: ", "data:", "event: ", "id: ", "retry: ", ": ", "\n\n", "\r\n",
                       "[DONE]", '"choices"', '"delta"', '"content"', '"finish_reason"',
                       '"usage"', '"prompt_tokens"', '"completion_tokens"',
                       '"prompt_tokens_details"', '"cached_tokens"', '"error"', '"message"'])


def gpt2_byte_order():
    """The 256 byte values in GPT-2's token order (ids 0..255 of every Whisper vocabulary)."""
    first = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    return first + [b for b in range(256) if b not in first]


def whisper_ggml(n_vocab=51864, tokens=None, tensors=(), n_mels=80, magic=0x67676D6C):
    hp = [n_vocab, 4, 8, 2, 1, 4, 8, 2, 1, n_mels, 0]
    out = struct.pack("<I", magic) + struct.pack("<11i", *hp)
    filters = [0.0] * (n_mels * 201)
    for m in range(n_mels):
        filters[m * 201 + min(200, 2 * m + 1)] = 0.01
    out += struct.pack("<2i", n_mels, 201) + struct.pack("<%df" % len(filters), *filters)
    tokens = tokens if tokens is not None else [bytes([b]) for b in gpt2_byte_order()] + [b"He", b"llo", b" world"]
    out += struct.pack("<i", len(tokens))
    for t in tokens:
        out += struct.pack("<I", len(t)) + t
    for name, ttype, dims, data in tensors:
        n = name.encode()
        out += struct.pack("<3i", len(dims), len(n), ttype) + struct.pack("<%di" % len(dims), *dims)
        out += n + data
    return out


def whisper_ggml_seeds():
    f32 = lambda xs: struct.pack("<%df" % len(xs), *xs)
    f16 = lambda xs: struct.pack("<%de" % len(xs), *xs)
    tensors = [("encoder.conv1.bias", 0, [1, 8], f32([0.5] * 8)),
               ("decoder.ln.weight", 1, [8], f16([1.0] * 8)),
               ("decoder.token_embedding.weight", 0, [8, 2], f32([0.1] * 16))]
    good = whisper_ggml(tensors=tensors)
    write("whisper_ggml", "small-model.bin", good)
    write("whisper_ggml", "multilingual-no-tensors.bin", whisper_ggml(n_vocab=51865))
    write("whisper_ggml", "128-mels.bin", whisper_ggml(n_mels=128, tokens=[b"a", b"b"]))
    write("whisper_ggml", "truncated.bin", good[:200])
    write("whisper_ggml", "bad-magic.bin", whisper_ggml(magic=0x46554747, tokens=[]))
    write_dict("whisper_ggml", ["lmgg", "encoder.", "decoder.", ".weight", ".bias", "blocks.0.",
                                "attn.query", "cross_attn", "mlp.0", "token_embedding",
                                "positional_embedding", "\xc9\x00\x00\x00", "\x50\x00\x00\x00"])


if __name__ == "__main__":
    whisper_ggml_seeds()
    gguf_seeds()
    wav_seeds()
    kb_seeds()
    config_seeds()
    twilio_seeds()
    softphone_seeds()
    audiosocket_seeds()
    http_seeds()
    openai_seeds()
    sse_seeds()

// Hotline softphone: microphone → WebSocket (/softphone/ws, docs/protocols.md) → speaker, with the
// live transcript and each turn's latency. Standard APIs only (getUserMedia, AudioWorklet with a
// ScriptProcessor fallback, WebSocket, AudioBufferSourceNode), for current Chromium and Firefox.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const FRAME_MS = 20;
  const JITTER_S = 0.08;  // playback starts this far behind the first audio of a burst

  // State the page exposes for tests and the curious (read-only by convention).
  const state = {
    status: 'idle',
    callId: '',
    sampleRate: 0,
    framesSent: 0,
    audioBytesReceived: 0,
    samplesScheduled: 0,
    samplesPlayed: 0,
    clears: 0,
    marksEchoed: 0,
    events: [],
    transcripts: [],
    answers: [],
    turns: [],
    closeCode: 0,
    closeReason: '',
    error: '',
  };
  window.hotlineSoftphone = state;

  let ws = null;
  let ctx = null;
  let stream = null;
  let captureNode = null;
  let sourceNode = null;
  let downsampler = null;
  let player = null;
  let frame = null;
  let frameFill = 0;
  let partialLine = null;

  // Low-pass FIR (windowed sinc) then linear interpolation: inRate → outRate, streaming.
  class Downsampler {
    constructor(inRate, outRate) {
      this.step = inRate / outRate;
      const taps = 31;
      const cutoff = (0.45 * outRate) / inRate;  // of the input rate
      this.kernel = new Float32Array(taps);
      let sum = 0;
      for (let i = 0; i < taps; i++) {
        const m = i - (taps - 1) / 2;
        const sinc = m === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * m) / (Math.PI * m);
        const hann = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (taps - 1));
        this.kernel[i] = sinc * hann;
        sum += this.kernel[i];
      }
      for (let i = 0; i < taps; i++) this.kernel[i] /= sum;
      this.history = new Float32Array(taps - 1);
      this.filtered = [];  // filtered samples not yet consumed
      this.pos = 0;        // next output position, in filtered samples
    }
    // Float32 input block → Int16Array of output samples.
    process(input) {
      const taps = this.kernel.length;
      const buf = new Float32Array(this.history.length + input.length);
      buf.set(this.history);
      buf.set(input, this.history.length);
      for (let n = 0; n < input.length; n++) {
        let acc = 0;
        for (let k = 0; k < taps; k++) acc += this.kernel[k] * buf[n + k];
        this.filtered.push(acc);
      }
      this.history = buf.slice(buf.length - this.history.length);
      const out = [];
      while (this.pos + 1 < this.filtered.length) {
        const i = Math.floor(this.pos);
        const f = this.pos - i;
        const v = this.filtered[i] * (1 - f) + this.filtered[i + 1] * f;
        out.push(Math.max(-32768, Math.min(32767, Math.round(v * 32767))));
        this.pos += this.step;
      }
      const drop = Math.floor(this.pos);
      this.filtered = this.filtered.slice(drop);
      this.pos -= drop;
      return Int16Array.from(out);
    }
  }

  // Plays PCM16 chunks in order on an AudioContext, a short jitter buffer ahead; `clear` drops
  // everything queued; marks are reported when playback reaches them.
  class Player {
    constructor(context, rate, onMark) {
      this.ctx = context;
      this.rate = rate;
      this.onMark = onMark;
      this.nextTime = 0;
      this.sources = new Set();
      this.marks = [];  // {name, at}
      this.timer = setInterval(() => this.checkMarks(), 20);
    }
    play(bytes) {
      const n = bytes.byteLength >> 1;
      if (n === 0) return;
      const view = new DataView(bytes);
      const buffer = this.ctx.createBuffer(1, n, this.rate);
      const ch = buffer.getChannelData(0);
      for (let i = 0; i < n; i++) ch[i] = view.getInt16(2 * i, true) / 32768;
      const src = this.ctx.createBufferSource();
      src.buffer = buffer;
      src.connect(this.ctx.destination);
      const now = this.ctx.currentTime;
      // Idle or an underrun: start a new burst behind a small jitter buffer.
      if (this.nextTime < now + 0.005) this.nextTime = now + JITTER_S;
      src.start(this.nextTime);
      this.nextTime += buffer.duration;
      this.sources.add(src);
      state.samplesScheduled += n;
      src.onended = () => {
        if (this.sources.delete(src)) state.samplesPlayed += n;
      };
    }
    mark(name) {
      this.marks.push({ name: name, at: this.nextTime });
      this.checkMarks();
    }
    checkMarks() {
      const now = this.ctx.currentTime;
      while (this.marks.length > 0 && this.marks[0].at <= now) this.onMark(this.marks.shift().name);
    }
    clear() {
      for (const src of this.sources) {
        try { src.stop(); } catch (e) { /* already stopped */ }
      }
      this.sources.clear();
      this.nextTime = 0;
      // What was queued is gone: every mark behind it counts as reached.
      while (this.marks.length > 0) this.onMark(this.marks.shift().name);
    }
    // Seconds of audio still queued.
    pending() {
      return Math.max(0, this.nextTime - this.ctx.currentTime);
    }
    close() {
      clearInterval(this.timer);
    }
  }

  function setStatus(text, cls) {
    state.status = text;
    const el = $('status');
    el.textContent = text;
    el.className = 'status' + (cls ? ' ' + cls : '');
  }

  function addLine(cls, who, text) {
    const div = document.createElement('div');
    div.className = 'line ' + cls;
    if (who) {
      const w = document.createElement('span');
      w.className = 'who';
      w.textContent = who;
      div.appendChild(w);
    }
    div.appendChild(document.createTextNode(text));
    $('transcript').appendChild(div);
    $('transcript').scrollTop = $('transcript').scrollHeight;
    return div;
  }

  function cell(row, text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function ms(v) {
    return typeof v === 'number' && isFinite(v) ? String(Math.round(v)) : '–';
  }

  function addTurn(t) {
    const l = t.ledger || {};
    const diff = (a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : null);
    const answered = typeof l.cache_result === 'number' ? l.cache_result : l.llm_first_token;
    const row = document.createElement('tr');
    cell(row, String(t.turn));
    cell(row, (t.tier || t.kind || '') + (t.outcome && t.outcome !== 'answered' ? ' (' + t.outcome + ')' : ''));
    cell(row, ms(diff(l.end_of_turn, l.speech_end)));
    cell(row, ms(diff(l.asr_final, l.end_of_turn)));
    // Negative: the answer was prepared while the caller was still talking (before the final).
    const answerMs = diff(answered, l.asr_final);
    cell(row, answerMs !== null && answerMs < 0 ? 'ready' : ms(answerMs));
    cell(row, ms(diff(l.tts_first_audio, l.first_sentence)));
    cell(row, ms(l.voice_to_voice), l.voice_to_voice > 1500 ? 'slow' : '');
    $('latency').querySelector('tbody').appendChild(row);
  }

  function onEvent(ev) {
    state.events.push(ev.type);
    switch (ev.type) {
      case 'started':
        state.callId = ev.call_id;
        setStatus('in call ' + ev.call_id, 'live');
        break;
      case 'partial':
        if (!partialLine) partialLine = addLine('partial', 'you', '');
        partialLine.lastChild.textContent = (ev.data && ev.data.text) || '';
        break;
      case 'transcript':
        if (partialLine) { partialLine.remove(); partialLine = null; }
        state.transcripts.push((ev.data && ev.data.text) || '');
        addLine('caller', 'you', (ev.data && ev.data.text) || '');
        break;
      case 'turn': {
        const t = ev.data || {};
        state.turns.push(t);
        if (t.answer) {
          state.answers.push(t.answer);
          addLine('agent', 'agent', t.answer);
        }
        if (t.kind === 'caller' || t.kind === 'dtmf') addTurn(t);
        break;
      }
      case 'barge_in':
        addLine('note', '', '(you talked over the agent)');
        break;
      case 'mark':
        if (player) player.mark(ev.name);
        break;
      case 'clear':
        state.clears++;
        if (player) player.clear();
        break;
      case 'hangup':
      case 'transfer':
      case 'busy':
        addLine('note', '', ev.type + ': ' + (ev.reason || ''));
        setStatus(ev.type === 'transfer' ? 'transferred to an agent' : ev.type, 'ended');
        break;
      case 'error':
        state.error = ev.message || (ev.data && ev.data.message) || 'error';
        addLine('note', '', 'error: ' + state.error);
        break;
      default:
        break;
    }
  }

  function sendJson(obj) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
  }

  function onCapture(block) {
    if (!ws || ws.readyState !== WebSocket.OPEN || !downsampler) return;
    let peak = 0;
    for (let i = 0; i < block.length; i++) peak = Math.max(peak, Math.abs(block[i]));
    $('level').value = peak;
    const pcm = downsampler.process(block);
    for (let i = 0; i < pcm.length; i++) {
      frame[frameFill++] = pcm[i];
      if (frameFill === frame.length) {
        ws.send(frame.buffer.slice(0));
        state.framesSent++;
        frameFill = 0;
      }
    }
  }

  async function startCapture(rate) {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      video: false,
    });
    sourceNode = ctx.createMediaStreamSource(stream);
    downsampler = new Downsampler(ctx.sampleRate, rate);
    frame = new Int16Array((rate * FRAME_MS) / 1000);
    frameFill = 0;
    if (ctx.audioWorklet && typeof AudioWorkletNode === 'function') {
      await ctx.audioWorklet.addModule('/web/softphone-worklet.js');
      captureNode = new AudioWorkletNode(ctx, 'hotline-capture',
                                         { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
      captureNode.port.onmessage = (e) => onCapture(e.data);
      sourceNode.connect(captureNode);
      // Its output is silence; connected so that every engine keeps pulling the node.
      captureNode.connect(ctx.destination);
    } else {
      // Older engines: ScriptProcessorNode (deprecated, but everywhere).
      captureNode = ctx.createScriptProcessor(2048, 1, 1);
      captureNode.onaudioprocess = (e) => onCapture(e.inputBuffer.getChannelData(0));
      sourceNode.connect(captureNode);
      captureNode.connect(ctx.destination);  // some engines only run connected processors
    }
  }

  function stopCapture() {
    if (sourceNode) sourceNode.disconnect();
    if (captureNode) {
      if (captureNode.port) captureNode.port.onmessage = null;
      captureNode.disconnect();
    }
    if (stream) stream.getTracks().forEach((t) => t.stop());
    sourceNode = captureNode = stream = null;
    downsampler = null;
    $('level').value = 0;
  }

  function finish() {
    stopCapture();
    $('call').disabled = false;
    $('hangup').disabled = true;
    // Let the agent's last words play out, then release the audio device.
    const p = player;
    const c = ctx;
    player = null;
    ctx = null;
    const wait = p ? p.pending() * 1000 + 300 : 0;
    setTimeout(() => {
      if (p) p.close();
      if (c) c.close();
    }, wait);
  }

  async function call() {
    const rate = Number($('rate').value);
    $('call').disabled = true;
    state.error = '';
    setStatus('starting…');
    try {
      ctx = new (window.AudioContext || window.webkitAudioContext)();
      if (ctx.state === 'suspended') await ctx.resume();
      player = new Player(ctx, rate, (name) => {
        state.marksEchoed++;
        sendJson({ type: 'mark', name: name });
      });
      await startCapture(rate);
    } catch (e) {
      state.error = String(e && e.message ? e.message : e);
      setStatus('microphone unavailable: ' + state.error, 'failed');
      finish();
      return;
    }
    state.sampleRate = rate;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    // A server with calls.softphone_token wants it on the socket: the page passes on its own
    // ?token=... (browsers cannot set headers on a WebSocket).
    const token = new URLSearchParams(location.search).get('token');
    const query = token ? '?token=' + encodeURIComponent(token) : '';
    ws = new WebSocket(scheme + '//' + location.host + '/softphone/ws' + query);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      const start = { type: 'start', version: 1, sample_rate: rate };
      const caller = $('caller').value.trim();
      if (caller) start.caller_id = caller;
      ws.send(JSON.stringify(start));
      setStatus('ringing…');
      $('hangup').disabled = false;
    };
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') {
        let ev;
        try { ev = JSON.parse(e.data); } catch (err) { return; }
        if (ev && typeof ev.type === 'string') onEvent(ev);
      } else {
        state.audioBytesReceived += e.data.byteLength;
        if (player) player.play(e.data);
      }
    };
    ws.onclose = (e) => {
      state.closeCode = e.code;
      state.closeReason = e.reason;
      if (state.status.startsWith('in call') || state.status === 'ringing…') {
        setStatus(e.code === 1000 ? 'call ended' : 'disconnected (' + e.code + ' ' + e.reason + ')',
                  e.code === 1000 ? 'ended' : 'failed');
      }
      ws = null;
      finish();
    };
  }

  function hangup() {
    sendJson({ type: 'hangup' });
    setStatus('call ended', 'ended');
    if (ws) ws.close(1000, 'caller hung up');
  }

  function buildKeypad() {
    for (const d of ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#']) {
      const b = document.createElement('button');
      b.textContent = d;
      b.addEventListener('click', () => sendJson({ type: 'dtmf', digit: d }));
      $('keypad').appendChild(b);
    }
  }

  setInterval(() => {
    $('stats').textContent = 'sent ' + state.framesSent + ' frames · received ' +
      Math.round(state.audioBytesReceived / 1024) + ' KiB of audio · played ' +
      (state.sampleRate ? (state.samplesPlayed / state.sampleRate).toFixed(1) : '0') + ' s';
  }, 500);

  $('call').addEventListener('click', call);
  $('hangup').addEventListener('click', hangup);
  buildKeypad();
  // Tests and kiosks: /softphone?autostart=1 calls at once (the browser must allow the microphone).
  const params = new URLSearchParams(location.search);
  if (params.get('rate') === '8000') $('rate').value = '8000';
  if (params.get('autostart') === '1') call();
})();

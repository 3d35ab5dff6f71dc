// Hotline softphone: the microphone capture worklet. Posts the first input channel to the page in
// blocks of about 20 ms (the page downsamples and frames them for the WebSocket).
class HotlineCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.block = new Float32Array(Math.max(128, Math.round(sampleRate / 50)));
    this.filled = 0;
  }
  process(inputs) {
    const input = inputs[0];
    if (input && input.length > 0) {
      const ch = input[0];
      let i = 0;
      while (i < ch.length) {
        const n = Math.min(ch.length - i, this.block.length - this.filled);
        this.block.set(ch.subarray(i, i + n), this.filled);
        this.filled += n;
        i += n;
        if (this.filled === this.block.length) {
          this.port.postMessage(this.block.slice(0));
          this.filled = 0;
        }
      }
    }
    return true;
  }
}
registerProcessor('hotline-capture', HotlineCapture);

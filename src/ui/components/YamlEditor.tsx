import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ConfigFieldError } from '../../server/configs.ts';

const LINE_HEIGHT = 20;

/**
 * The config editor: the YAML wraps at the editor's width (no line is cut), each line's number in the gutter and
 * each field error beside the line it names. A hidden copy of the text with the textarea's width, font and wrapping
 * gives every line's top, so numbers and errors sit beside the line however many rows it wraps to.
 */
export function YamlEditor({ text, onChange, errors }: { text: string; onChange: (text: string) => void; errors: readonly ConfigFieldError[] }) {
  const [scrollTop, setScrollTop] = useState(0);
  const mirror = useRef<HTMLDivElement>(null);
  const lines = text.split('\n');
  const [tops, setTops] = useState<number[]>([]);
  useLayoutEffect(() => {
    const el = mirror.current;
    if (!el) return;
    const measure = () => setTops(Array.from(el.children, (line) => (line as HTMLElement).offsetTop));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [text]);
  const top = (index: number) => tops[index] ?? index * LINE_HEIGHT;
  const errorsByLine = useMemo(() => {
    const map = new Map<number, ConfigFieldError[]>();
    for (const e of errors) if (e.line !== null) map.set(e.line, [...(map.get(e.line) ?? []), e]);
    return map;
  }, [errors]);
  const shift = { transform: `translateY(${-scrollTop}px)` };
  return (
    <div className="editor">
      <div className="gutter" aria-hidden="true">
        <div style={shift}>
          {lines.map((_, i) => (
            <div key={i} className={errorsByLine.has(i + 1) ? 'gutter-line bad' : 'gutter-line'} style={{ top: top(i) }}>
              {i + 1}
            </div>
          ))}
        </div>
      </div>
      <div className="editor-text">
        <div className="editor-mirror" ref={mirror} aria-hidden="true">
          {lines.map((line, i) => (
            <div key={i}>{line || ' '}</div>
          ))}
        </div>
        <textarea
          spellCheck={false}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
          aria-label="campaign config YAML"
          data-testid="config-editor"
        />
      </div>
      <div className="field-errors" aria-live="polite">
        <div style={shift}>
          {[...errorsByLine.entries()].map(([line, list]) => (
            <div key={line} className="field-error" style={{ top: top(line - 1) }} data-testid="field-error">
              ← {list.map((e) => `${e.path}: ${e.message}`).join('; ')}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}

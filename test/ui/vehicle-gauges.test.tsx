import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { VehicleGauges } from '../../src/ui/views/LiveView.tsx';

describe('VehicleGauges', () => {
  it('shows each vehicle value the context carries, and leaves out those it does not', () => {
    const html = renderToStaticMarkup(<VehicleGauges vehicle={{ speedKmh: 87, gear: 'D', stateOfChargePct: 42.5, outsideTempC: 4.2 }} />);
    expect(html).toContain('87 km/h');
    expect(html).toContain('42.5 %');
    expect(html).toContain('4.2 °C');
    expect(html).toContain('<strong>D</strong>');
    expect(html).not.toContain('Range');
    // the bar is filled in proportion: 87 of 200 km/h
    expect(html).toContain('width:43.5%');
  });

  it('shows a reading to the digits its quantity has, not the simulation\'s arithmetic', () => {
    const html = renderToStaticMarkup(<VehicleGauges vehicle={{ speedKmh: 29.97, gear: 'D', stateOfChargePct: 60.93123333333333 }} />);
    expect(html).toContain('60.9 %');
    expect(html).toContain('30 km/h');
    expect(html).not.toContain('60.93');
  });
});

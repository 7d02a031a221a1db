// uPlot with its stylesheet: the one chunk chart.tsx loads on first use (import()), so
// neither is in the console's first load.
import 'uplot/dist/uPlot.min.css'
export { default } from 'uplot'

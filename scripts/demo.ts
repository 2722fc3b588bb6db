// npm run demo -- hairstyle <image|dev:NAME> [--colors blonde,red,...] [--styles ...] [--version NAME] [--out FILE]
//   Renders the hairstyle templates in the chosen colours on one photo and writes a contact
//   sheet (rows: styles, columns: colours) and a debug sheet (scripts/demo-hairstyle.ts).
// npm run demo -- tryon <garment> <person> <upper_body|lower_body|dresses> [--out FILE]
//   Writes the try-on result and a debug sheet beside it: garment mask and landmarks, person
//   keypoints and body targets, the warped grid, the result.
const [what, file, ...rest] = process.argv.slice(2);
if (what === 'tryon') {
  const { demoTryon } = await import('./demo-tryon.ts');
  await demoTryon(file, rest);
  process.exit(0);
}
if (what === 'hairstyle') {
  const { demoHairstyle } = await import('./demo-hairstyle.ts');
  await demoHairstyle(file, rest);
  process.exit(0);
}
console.error('usage: npm run demo -- hairstyle <photo|dev:NAME> [--colors blonde,red] [--styles "Bowl Cut,Mohawk"] [--version hairstyle-bisenet] [--out sheet.jpg]\n       npm run demo -- tryon <garment> <person> <upper_body|lower_body|dresses> [--out result.jpg]');
process.exit(2);

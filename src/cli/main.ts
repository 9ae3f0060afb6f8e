const [command = "start"] = process.argv.slice(2);
console.log(`autopilot ${command}: the sandbox is not built yet.`);

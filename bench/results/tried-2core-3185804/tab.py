import sys,re,collections
# usage: tab.py file...  prints chans/native per round for each row, plus chans B/op
for fn in sys.argv[1:]:
    d=collections.defaultdict(list); bo=collections.defaultdict(list)
    for l in open(fn):
        f=l.split()
        if len(f)<4: continue
        d[f[0]].append(float(f[2]))
        if 'B/op' in f: bo[f[0]].append(f[f.index('B/op')-1])
    print("==",fn)
    rows=[]
    for k in d:
        r=re.sub(r'impl=[\w-]+','impl=X',k)
        if r not in rows: rows.append(r)
    for r in rows:
        n=d.get(r.replace('impl=X','impl=native'));c=d.get(r.replace('impl=X','impl=chans'))
        if n and c:
            rs=sorted(x/y for x,y in zip(c,n))
            med=rs[len(rs)//2] if len(rs)%2 else (rs[len(rs)//2-1]+rs[len(rs)//2])/2
            print(f"{r.replace('BenchmarkBar/','').replace('impl=X/',''):42s} med {med:.2f}x  [" + " ".join(f"{x:.2f}" for x in rs) + "]  chans ns " + " ".join(f"{x:.0f}" for x in c) + "  B/op " + ",".join(bo[r.replace('impl=X','impl=chans')]))

import csv,sys,collections,statistics as st
d=collections.defaultdict(dict)
for r in csv.reader(open(sys.argv[1])):
    if len(r)>6 and r[1]=='raw': d[(int(r[2]),int(r[3]),r[4])][r[5]]=float(r[6])
o=collections.defaultdict(list)
for (rnd,th,var),m in d.items():
    if not var.startswith('kernel'): continue
    pf=((rnd-1)%4) in (1,2)
    o[(th,var,pf,'MB/s')].append(round(m['mb_s']))
    o[(th,var,pf,'us/MiB')].append(round(m['cpu_ns']/1e3/(m['bytes']/2**20)))
for k in sorted(set(k[:2]+k[3:] for k in o)):
    a=o[(k[0],k[1],False,k[2])]; b=o[(k[0],k[1],True,k[2])]
    print("thr %s %-12s %-7s plain med %5d %s | treated med %5d %s"%(k[0],k[1],k[2],st.median(a),a,st.median(b),b))
